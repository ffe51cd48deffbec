import type { Queue } from 'bullmq';
import { METRIC, type Metrics } from './metrics';

const STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed', 'paused'] as const;

/**
 * `calendar_queue_jobs{queue,state}`, read from Redis when scraped: the backlog a worker
 * deployment is scaled on. While Redis is unreachable the scrape still answers, without
 * these series.
 */
export function queueDepthGauge(metrics: Metrics, queues: () => Queue[]): void {
  metrics.gauge(METRIC.queueJobs, 'Jobs in each queue, by state (waiting, prioritized, active, delayed, failed, paused)', ['queue', 'state'], async (gauge) => {
    gauge.reset();
    await Promise.all(
      queues().map(async (queue) => {
        try {
          const counts = await queue.getJobCounts(...STATES);
          for (const state of STATES) gauge.set({ queue: queue.name, state }, counts[state] ?? 0);
        } catch {
          // Redis away: no figure is better than a wrong one.
        }
      }),
    );
  });
}
