import type { OpenApiConformance } from './openapi-conformance';

export interface ApiResponse<T = any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read whatever the API sends
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, with `contentType` (default application/json). */
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Skip the OpenAPI check (for requests that probe undocumented paths on purpose). */
  unchecked?: boolean;
}

/**
 * HTTP client for tests. Every response it receives is checked against /docs.openapi, so
 * the whole suite proves the document matches what the service answers.
 */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null,
    private readonly conformance: OpenApiConformance,
    /** A dashboard session instead of a token: its cookie, and its CSRF token sent on every request. */
    readonly session?: { cookie: string; csrf: string },
  ) {}

  as(token: string | null): ApiClient {
    return new ApiClient(this.baseUrl, token, this.conformance);
  }

  /** The same API as a signed-in dashboard would call it. */
  asSession(session: { cookie: string; csrf: string }): ApiClient {
    return new ApiClient(this.baseUrl, null, this.conformance, session);
  }

  get = (path: string, opts?: RequestOptions) => this.request('GET', path, opts);
  post = (path: string, body?: unknown, opts?: RequestOptions) => this.request('POST', path, { ...opts, body });
  put = (path: string, body?: unknown, opts?: RequestOptions) => this.request('PUT', path, { ...opts, body });
  delete = (path: string, body?: unknown, opts?: RequestOptions) => this.request('DELETE', path, { ...opts, body });

  async request(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (this.session) {
      headers.Cookie = this.session.cookie;
      headers['X-CSRF-Token'] = this.session.csrf;
    }
    let body: string | Buffer | undefined;
    if (opts.raw !== undefined) {
      body = opts.raw;
      headers['Content-Type'] = opts.contentType ?? 'application/json';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] = 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    const contentType = res.headers.get('content-type');
    let parsed: unknown = text;
    if (contentType?.includes('json') && text) parsed = JSON.parse(text);
    if (!opts.unchecked) {
      const problems = this.conformance.check(method, path, res.status, contentType, parsed);
      if (problems.length) {
        throw new Error(`Response does not match /docs.openapi:\n  ${problems.slice(0, 10).join('\n  ')}\nbody: ${text.slice(0, 2000)}`);
      }
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }
}
