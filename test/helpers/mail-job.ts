import type { Job, Queue } from 'bullmq';
import type { MailJob } from '../../shared/queues/mail.job';

/**
 * The mail job that carries a delivery row. Job ids are random (never a row id), so the job
 * is found through the payloads of the queue's jobs, in every state.
 */
export async function mailJobOf(queue: Queue<MailJob>, deliveryId: number): Promise<Job<MailJob> | undefined> {
  const jobs = await queue.getJobs(['active', 'prioritized', 'waiting', 'delayed', 'paused', 'completed', 'failed'], 0, -1);
  return jobs.find((job) => job?.data?.messages?.some((m) => m.deliveryId === deliveryId));
}

/** The same job read again (its state, attempts and return value as they are now). */
export const reread = async (queue: Queue<MailJob>, job: Job<MailJob> | undefined) => (job?.id ? queue.getJob(job.id) : undefined);
