import { Queue } from 'bullmq';
import { type MailJob, mailJob } from '../../shared/queues/mail.job';
import type { TestGateway } from './gateway';
import { mailJobOf } from './mail-job';

/**
 * The key of an address's answer as its email carries it, for tests that run no mail worker:
 * the change link of the newest RSVP message to the address about the event (the job's
 * `answerUrl`, which the mail worker puts in the message). An answer given without its key
 * hands out none: the address's email is the one way to it.
 */
export async function emailedAnswerKey(gw: Pick<TestGateway, 'db' | 'redis' | 'config'>, eventUid: string, email: string): Promise<string> {
  const delivery = await gw
    .db('deliveries as d')
    .join('events as e', 'e.id', 'd.event_id')
    .where('e.uid', eventUid)
    .whereRaw('lower(d.email) = lower(?)', [email])
    .whereIn('d.kind', ['rsvp_yes', 'rsvp_maybe', 'rsvp_no', 'rsvp_link'])
    .orderBy('d.id', 'desc')
    .first('d.id');
  if (!delivery) throw new Error(`no RSVP message to ${email} about ${eventUid}`);
  const queue = new Queue<MailJob>(mailJob.queue, { connection: gw.redis, prefix: gw.config.queuePrefix });
  try {
    const url = (await mailJobOf(queue, delivery.id))?.data.answerUrl;
    const key = url ? new URL(url).searchParams.get('key') : null;
    if (!key) throw new Error(`no answer link in the message to ${email} about ${eventUid}`);
    return key;
  } finally {
    await queue.close();
  }
}
