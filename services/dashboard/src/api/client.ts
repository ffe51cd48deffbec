import createClient, { type Middleware } from 'openapi-fetch';
import type { Paths } from './paths';

/**
 * The one way the dashboard talks to the server: `/api/*` on this origin, typed by the
 * OpenAPI document (an API change the dashboard does not follow fails the type-check), with
 * the session cookie, and the session's CSRF token on every request that changes something.
 */
export const api = createClient<Paths>({ baseUrl: '', credentials: 'same-origin', headers: { Accept: 'application/json' } });

let csrfToken: string | null = null;
let onSignedOut: (() => void) | null = null;

/** The session's CSRF token (from GET /api/session), sent as X-CSRF-Token on every non-GET. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the API answers 401 to a signed-in request: the session ended. */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

/** Answers 401 as part of their meaning (a wrong password, an old link, no session yet). */
const SIGN_IN_PATHS = ['/api/auth/', '/api/session'];

const session: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrfToken) request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
  onResponse({ request, response }) {
    const path = new URL(request.url).pathname;
    if (response.status === 401 && !SIGN_IN_PATHS.some((p) => path.startsWith(p))) onSignedOut?.();
    return response;
  },
};
api.use(session);

/** An API refusal: its status, `message`, and the 422's messages per field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: Record<string, string[]> = {},
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

function errorOf(response: Response, body: unknown): ApiError {
  const b = (body && typeof body === 'object' ? body : {}) as { message?: unknown; error?: unknown; errors?: unknown };
  const text = typeof b.message === 'string' ? b.message : typeof b.error === 'string' ? b.error : `The server answered ${response.status} ${response.statusText}.`;
  const fields = b.errors && typeof b.errors === 'object' ? (b.errors as Record<string, string[]>) : {};
  const retry = Number(response.headers.get('Retry-After'));
  const message = response.status === 429 && retry > 0 ? `${text} Try again in ${retry} second${retry === 1 ? '' : 's'}.` : text;
  return new ApiError(response.status, message, fields, retry > 0 ? retry : null);
}

/** The body of a successful answer, or an ApiError (also for a network failure). */
export async function call<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await request;
  } catch (err) {
    throw new ApiError(0, `Could not reach the server (${err instanceof Error ? err.message : String(err)}). Check your connection and try again.`);
  }
  if (!result.response.ok) throw errorOf(result.response, result.error);
  return result.data as T;
}

/** A file from the API (CSV export), fetched with the session cookie, saved under its name. */
export async function download(url: string, fallbackName: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'text/csv' } });
  } catch (err) {
    throw new ApiError(0, `Could not reach the server (${err instanceof Error ? err.message : String(err)}).`);
  }
  if (!response.ok) {
    if (response.status === 401) onSignedOut?.();
    throw errorOf(response, await response.json().catch(() => null));
  }
  const disposition = response.headers.get('Content-Disposition') ?? '';
  const name = /filename="?([^";]+)/.exec(disposition)?.[1] ?? fallbackName;
  const href = URL.createObjectURL(await response.blob());
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}
