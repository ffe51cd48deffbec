import Joi from 'joi';
import { pgTimestampToMillis } from '../calendar/dates';
import type { Logger } from '../logging/logger';
import { UID_PATTERN } from '../ids/ids';
import { defineJob, type JobMeta, jobMetaSchema, type Producer, QUEUES } from './queues';

/**
 * An event's next email reminder, as a delayed job due when the reminder is: the event by
 * its uid and the time it was due when the job was queued. The event row stays the
 * schedule (events.next_reminder_at): the job runs the event's reminders only if that is
 * still when they are due, so a moved event's old job, or a deleted event's, does nothing.
 */
export interface ReminderJob {
  event: string;
  /** When the reminder was due when the job was queued (ISO 8601). */
  due: string;
  meta?: JobMeta;
}

export const reminderJob = defineJob<ReminderJob>({
  queue: QUEUES.reminders,
  schema: Joi.object({ event: Joi.string().pattern(UID_PATTERN).required(), due: Joi.string().isoDate().required(), meta: jobMetaSchema }),
  // Postgres or Redis away when it is due: tried again for about half an hour (the sweep
  // sends it meanwhile if the job cannot run). Done with, it is gone.
  defaults: { attempts: 12, backoff: { type: 'capped' }, removeOnComplete: true },
});

/**
 * The job of an event's reminder due at a time: named by both (the uid is random, never a
 * row id), so a moved event's new time is a new job and one time is never queued twice.
 */
const reminderJobId = (eventUid: string, dueMs: number) => `reminder-${eventUid}-${dueMs}`;

/**
 * Queues the event's next reminder as a job delayed until it is due. Best effort: a reminder
 * that could not be queued (Redis away) is still sent, by the mail worker's sweep of the
 * event rows, which is the safety net of every reminder.
 */
export async function queueReminder(
  producer: Pick<Producer<ReminderJob>, 'add'>,
  event: { uid: string; next_reminder_at: string | Date | null },
  nowMs: number,
  logger: Logger,
): Promise<void> {
  if (event.next_reminder_at === null) return;
  const at = event.next_reminder_at;
  const dueMs = at instanceof Date ? at.getTime() : pgTimestampToMillis(at);
  try {
    await producer.add('remind', { event: event.uid, due: new Date(dueMs).toISOString() }, { jobId: reminderJobId(event.uid, dueMs), delay: Math.max(0, dueMs - nowMs) });
  } catch (err) {
    logger.warn({ err: (err as Error).message?.slice(0, 200), event: event.uid }, 'could not queue a reminder; the sweep sends it');
  }
}
