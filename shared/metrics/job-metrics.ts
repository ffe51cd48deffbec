import { METRIC, type Metrics } from './metrics';

/**
 * A queue's job figures in a worker: how long jobs take (by outcome), how many attempts
 * failed, and how many of those will be tried again.
 */
export function jobMetrics(metrics: Metrics, queue: string) {
  const duration = metrics.histogram(METRIC.jobDuration, 'Time a worker spent on a job attempt, by queue and outcome', ['queue', 'outcome']);
  const failures = metrics.counter(METRIC.jobFailures, 'Job attempts that failed, by queue', ['queue']);
  const retries = metrics.counter(METRIC.jobRetries, 'Failed job attempts that will be tried again, by queue', ['queue']);
  const completed = duration.labels({ queue, outcome: 'completed' });
  const failed = duration.labels({ queue, outcome: 'failed' });
  const failure = failures.labels({ queue });
  const retry = retries.labels({ queue });
  // Zero series from the start, so a rate() over them is defined before the first failure.
  failure.inc(0);
  retry.inc(0);
  return {
    completed: (seconds: number) => completed.observe(seconds),
    failed(seconds: number, willRetry: boolean) {
      failed.observe(seconds);
      failure.inc();
      if (willRetry) retry.inc();
    },
  };
}
