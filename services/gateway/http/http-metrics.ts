import type { Counter, Histogram } from 'prom-client';
import { eventLimitRejections, METRIC, type Metrics } from '../../../shared/metrics/metrics';

type Labels = 'method' | 'route' | 'status';

/**
 * The gateway's request metrics: a count and a latency histogram per method, route pattern
 * and status. The labelled children are kept, so the hot paths (ingest, public redirects)
 * pay a map lookup per request instead of prom-client's label hashing.
 */
export class HttpMetrics {
  private readonly requests: Counter<Labels>;
  private readonly duration: Histogram<Labels>;
  private readonly rejections: Counter<'source'>;
  private readonly feedBuilds: Counter;
  private readonly children = new Map<string, { count: Counter.Internal; time: Histogram.Internal<Labels> }>();

  constructor(metrics: Metrics) {
    this.requests = metrics.counter(METRIC.httpRequests, 'HTTP requests answered, by method, route and status', ['method', 'route', 'status']);
    this.duration = metrics.histogram(METRIC.httpDuration, 'Time to answer HTTP requests, by method, route and status', ['method', 'route', 'status']);
    this.rejections = eventLimitRejections(metrics);
    this.feedBuilds = metrics.counter(METRIC.feedBuilds, 'Calendar feeds built from Postgres (the others were answered from the feed cache)', []);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let child = this.children.get(key);
    if (!child) {
      const labels = { method, route, status: String(status) };
      child = { count: this.requests.labels(labels), time: this.duration.labels(labels) };
      this.children.set(key, child);
    }
    child.count.inc();
    child.time.observe(seconds);
  }

  /** An event refused by the monthly event limit on the API (the smart-link worker counts its own). */
  eventLimitRejected(): void {
    this.rejections.inc({ source: 'api' });
  }

  /** A calendar feed built (not answered from the cache, nor by joining a build under way). */
  feedBuilt(): void {
    this.feedBuilds.inc();
  }
}
