import autocannon from 'autocannon';

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  statusCounts: Record<string, number>;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  durationSec?: number;
  /** Per-request bodies, e.g. unique payloads (overrides body). */
  setupRequest?: (req: { body?: string }) => { body?: string };
}

export const BENCH_DURATION = Number(process.env.BENCH_DURATION ?? 10);
export const BENCH_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

/** autocannon against one URL; latencies in milliseconds. */
export async function load(opts: LoadOptions): Promise<LoadResult> {
  const statusCounts: Record<string, number> = {};
  const instance = autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections ?? BENCH_CONNECTIONS,
    duration: opts.durationSec ?? BENCH_DURATION,
    requests: opts.setupRequest ? [{ setupRequest: opts.setupRequest as never }] : undefined,
  });
  // autocannon's instance is both a promise and an event emitter; its types show only the promise.
  (instance as unknown as NodeJS.EventEmitter).on('response', (_client: unknown, statusCode: number) => {
    statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
  });
  const result = await instance;
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCounts,
  };
}

/** A short run to warm up JIT, pools and caches; its figures are thrown away. */
export async function warm(opts: LoadOptions): Promise<void> {
  await load({ ...opts, durationSec: 2 });
}
