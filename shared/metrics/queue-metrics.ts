import type { Queue } from 'bullmq';
import { METRIC, type Metrics } from './metrics';

const STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed', 'paused'] as const;

/** A scrape waits no longer than this for the counts (Prometheus times out at 10 s by default). */
const COLLECT_TIMEOUT_MS = 1000;

/**
 * `calendar_queue_jobs{queue,state}`, read from Redis when scraped: the backlog a worker
 * deployment is scaled on. While Redis is unreachable the scrape still answers, without
 * these series: a queue whose connection is not ready is skipped (BullMQ would hold the
 * command until it is, for as long as the outage lasts), and counts that take longer than
 * a second are left out.
 */
export function queueDepthGauge(metrics: Metrics, queues: () => Queue[]): void {
  metrics.gauge(METRIC.queueJobs, 'Jobs in each queue, by state (waiting, prioritized, active, delayed, failed, paused)', ['queue', 'state'], async (gauge) => {
    gauge.reset();
    await Promise.all(
      queues().map(async (queue) => {
        if (!connectionReady(queue)) return;
        try {
          const counts = await withTimeout(queue.getJobCounts(...STATES), COLLECT_TIMEOUT_MS);
          for (const state of STATES) gauge.set({ queue: queue.name, state }, counts[state] ?? 0);
        } catch {
          // Redis away or slow: no figure is better than a wrong one.
        }
      }),
    );
  });
}

/** False while the client the queue was given is not connected (a queue given options makes its own: the timeout covers it). */
function connectionReady(queue: Queue): boolean {
  const status = (queue.opts.connection as { status?: unknown }).status;
  return status === undefined || status === 'ready';
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
