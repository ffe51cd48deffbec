import { timingSafeEqual, createHash } from 'node:crypto';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AppError, httpError } from '../errors/app-error';

/** Seconds: from a fast answer on the ingest path to a slow feed build or a waited extraction. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * One process's Prometheus metrics (prom-client), in a registry of its own (tests run
 * several gateways in one process). Metrics are made on first use and shared by name, so
 * every place that counts the same thing counts into the same series. All names start
 * with `calendar_`; every series carries the `service` label.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly made = new Map<string, Counter<string> | Histogram<string> | Gauge<string>>();

  constructor(service: string, opts: { processMetrics?: boolean } = {}) {
    this.registry.setDefaultLabels({ service });
    // CPU, memory, event-loop lag, GC: for the real processes, not for every test app.
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'calendar_' });
  }

  counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return this.once(name, () => new Counter({ name, help, labelNames, registers: [this.registry] }));
  }

  histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets = DURATION_BUCKETS): Histogram<L> {
    return this.once(name, () => new Histogram({ name, help, labelNames, buckets, registers: [this.registry] }));
  }

  /** A gauge read when scraped (`collect` sets its values). */
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[], collect: (g: Gauge<L>) => Promise<void>): Gauge<L> {
    return this.once(
      name,
      () =>
        new Gauge({
          name,
          help,
          labelNames,
          registers: [this.registry],
          async collect() {
            await collect(this);
          },
        }),
    );
  }

  /** The text exposition format, and its content type. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private once<M extends Counter<string> | Histogram<string> | Gauge<string>>(name: string, make: () => M): M {
    let metric = this.made.get(name);
    if (!metric) {
      metric = make();
      this.made.set(name, metric);
    }
    return metric as M;
  }
}

/** The metrics every service reports, by name, so producers and the docs agree. */
export const METRIC = {
  httpRequests: 'calendar_http_requests_total',
  httpDuration: 'calendar_http_request_duration_seconds',
  queueJobs: 'calendar_queue_jobs',
  jobDuration: 'calendar_job_duration_seconds',
  jobFailures: 'calendar_job_failures_total',
  jobRetries: 'calendar_job_retries_total',
  emailDeliveries: 'calendar_email_deliveries_total',
  eventLimitRejections: 'calendar_event_limit_rejections_total',
  feedBuilds: 'calendar_feed_builds_total',
  inboundMessages: 'calendar_inbound_messages_total',
} as const;

export const eventLimitRejections = (m: Metrics) =>
  m.counter(METRIC.eventLimitRejections, 'Events refused because the team reached its monthly event limit', ['source'] as const);

/**
 * Whether an `Authorization` header carries the metrics token: `Bearer <token>`. Compared
 * as SHA-256 digests with timingSafeEqual, so neither the length nor the content of the
 * token leaks through the time the comparison takes.
 */
function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  if (!m) return false;
  return timingSafeEqual(digest(m[1]), digest(token));
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * GET /metrics for any service: the exposition; an AppError (answered by the service's
 * error mapping) of 404 while METRICS_TOKEN is unset (metrics are off), 401 without the token.
 */
export async function metricsAnswer(
  metrics: Metrics,
  token: string | null,
  authorization: string | undefined,
): Promise<{ headers: Record<string, string>; body: string }> {
  if (!token) throw httpError(404, 'Metrics are off: set METRICS_TOKEN to serve them.');
  if (!bearerMatches(authorization, token)) throw new AppError('unauthenticated', 401, 'Unauthenticated.', {}, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
  const { contentType, body } = await metrics.exposition();
  return { headers: { 'Content-Type': contentType, 'Cache-Control': 'no-store' }, body };
}
