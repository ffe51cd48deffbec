import { pgTimestampToMillis } from '../../shared/calendar/dates';
import type { Config } from '../../shared/config/config';
import { deploymentOf } from '../../shared/db/deployment';
import { isDbUnavailableError, type Knex } from '../../shared/db/knex';
import { AppError } from '../../shared/errors/app-error';
import type { Clock } from '../../shared/lifecycle/clock';
import { unsubscribeUrl } from '../../shared/links/signatures';
import type { Logger } from '../../shared/logging/logger';
import { applyMailQuota } from '../../shared/mail/mail-quota';
import { isPublished, type MailCalendarRow, type MailEventRow, type NewDelivery, type Producers, queueDeliveries } from '../../shared/mail/queue-mail';
import { dueReminders, nextReminder, type Occurrence, type ReminderEvent, reminderColumns, storeNextReminder } from '../../shared/mail/reminders';
import { queueReminder, type ReminderJob, reminderJob } from '../../shared/queues/reminder.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { createWorker, type WorkerDefinition } from '../../shared/queues/worker';
import { mailJob } from '../../shared/queues/mail.job';
import { type JobContract, Producer } from '../../shared/queues/queues';
import { isRedisUnavailableError } from '../../shared/queues/redis';
import type { WorkerContext } from '../../shared/queues/worker';

/**
 * Email reminders. An event's next reminder is stored on its row (events.next_reminder_at)
 * and queued as a BullMQ job delayed until it is due (reminder.job.ts), by the gateway when
 * the event is made or changed and here after each reminder. When the job comes due, the
 * reminders queue's worker handles that event; every REMINDER_SWEEP_MS each mail worker
 * also sweeps the events whose next reminder is due (through the partial index on
 * next_reminder_at: the cost is the due rows', not the table's), which sends any reminder
 * whose job never came (it could not be queued, or was lost with Redis). Either way an
 * event is handled in one transaction of its own, holding the event row (SKIP LOCKED:
 * workers at once share the rows, and an event being changed is left for later):
 *
 * - one delivery row per recipient for (event, address, occurrence, offset), unique, so a
 *   sweep run again (a worker killed before its commit, two workers) makes none twice;
 * - their jobs, queued as the gateway queues its messages (stored in Redis before the rows
 *   commit: Redis away → nothing stored, the event stays due);
 * - the event's next reminder, stored in its place.
 *
 * The row is the schedule and the job only the alarm: a job whose event moved, was deleted
 * or was already reminded finds nothing due and does nothing; Redis losing everything loses
 * no reminder not yet queued, and any worker's next sweep takes over from one that died.
 */

interface DueRow extends MailEventRow, ReminderEvent {
  deleted_at: string | null;
  next_reminder_at: string;
  c_team_id: number;
  c_name: string;
  c_organizer_name: string | null;
  c_organizer_email: string | null;
  c_locale: string | null;
  c_deleted_at: string | null;
}

const EVENT_FIELDS = [
  'id', 'uid', 'team_id', 'title', 'description', 'location', 'location_url', 'image_url', 'date_start', 'date_end', 'ends_at', 'is_all_day',
  'timezone', 'recurrence_rule', 'reminder_before', 'busy_type', 'sequence', 'updated_at', 'created_at', 'status', 'is_draft', 'access_code_hash', 'has_rsvp',
  'email_reminders', 'deleted_at', 'next_reminder_at',
].map((c) => `e.${c}`);

interface SweepDeps {
  db: Knex;
  config: Config;
  clock: Clock;
  queues: Producers;
  logger: Logger;
  /** Where each event's next reminder is queued as a delayed job. */
  reminders: Pick<Producer<ReminderJob>, 'add'>;
}

/** One event's due reminders in a transaction of its own, then its next one queued as a job; null when not due (or held). */
async function remindEvent(deps: SweepDeps, id: number, now: Date): Promise<Reminded | null> {
  const done = await deps.db.transaction((trx) => remindOne(trx, deps, id, now));
  if (done) await queueReminder(deps.reminders, done.event, deps.clock.now().getTime(), deps.logger);
  return done;
}

interface SweepResult {
  /** Events whose due reminders were handled (sent, or passed over as too late). */
  events: number;
  /** Messages queued. */
  messages: number;
}

/**
 * Recipients of one reminder: the invitees who have not declined, and everyone whose RSVP is
 * yes or maybe, once per address (an invitee who also answered is one recipient); a no from
 * either side (a declined invitation, an RSVP of no) leaves the address out, and so does an
 * opt-out of this event's reminders. Delivery rows already made for this occurrence and
 * offset are not made again.
 */
async function insertReminderDeliveries(trx: Knex, e: DueRow, occurrenceMs: number, minutes: number): Promise<NewDelivery[]> {
  const { rows } = await trx.raw(
    `WITH recipients AS (
       SELECT i.email, i.name, i.id AS invitee_id, i.uid AS invitee_uid, NULL::bigint AS rsvp_id, NULL::text AS rsvp_uid, 0 AS rank, i.id AS ord FROM invitees i
        WHERE i.event_id = :event AND i.response IS DISTINCT FROM 'declined'
          AND NOT EXISTS (SELECT 1 FROM rsvps r WHERE r.event_id = i.event_id AND lower(r.email) = lower(i.email) AND r.answer = 'no')
       UNION ALL
       SELECT r.email, r.name, NULL, NULL, r.id, r.uid, 1, r.id FROM rsvps r
        WHERE r.event_id = :event AND r.answer IN ('yes', 'maybe')
          AND NOT EXISTS (SELECT 1 FROM invitees i WHERE i.event_id = r.event_id AND lower(i.email) = lower(r.email))
     ), wanted AS (
       SELECT * FROM recipients rc
        WHERE NOT EXISTS (SELECT 1 FROM reminder_optouts o WHERE o.event_id = :event AND o.email = lower(rc.email))
     ), ins AS (
       INSERT INTO deliveries (team_id, event_id, invitee_id, rsvp_id, email, kind, sequence, occurrence_at, reminder_minutes)
       SELECT :team, :event, invitee_id, rsvp_id, email, 'reminder', :sequence, :occurrence, :minutes FROM wanted
        ORDER BY rank, ord
       ON CONFLICT DO NOTHING
       RETURNING id, key, email
     )
     SELECT ins.id, ins.key, ins.email, w.name, w.invitee_id, w.invitee_uid, w.rsvp_uid FROM ins JOIN wanted w ON lower(w.email) = lower(ins.email) ORDER BY ins.id`,
    { event: e.id, team: e.team_id, sequence: e.sequence, occurrence: new Date(occurrenceMs).toISOString(), minutes },
  );
  return rows as NewDelivery[];
}

/** What remindOne did: messages queued, and the event's next reminder now stored. */
interface Reminded {
  queued: number;
  event: { uid: string; next_reminder_at: string | null };
}

/** One due event, in the caller's transaction; null when another worker holds it or it is no longer due. */
async function remindOne(trx: Knex, deps: SweepDeps, id: number, now: Date): Promise<Reminded | null> {
  const { rows } = await trx.raw(
    `SELECT ${EVENT_FIELDS.join(', ')}, c.team_id AS c_team_id, c.name AS c_name, c.organizer_name AS c_organizer_name, c.organizer_email AS c_organizer_email, c.locale AS c_locale, c.deleted_at AS c_deleted_at
       FROM events e JOIN calendars c ON c.id = e.calendar_id
      WHERE e.id = ? AND e.next_reminder_at <= ?
      FOR UPDATE OF e SKIP LOCKED`,
    [id, now.toISOString()],
  );
  const e = rows[0] as DueRow | undefined;
  if (!e) return null;
  // Gone, or in a calendar that went with its team: no more reminders.
  if (e.deleted_at !== null || e.c_deleted_at !== null) {
    await storeNextReminder(trx, e.id, null);
    return { queued: 0, event: { uid: e.uid, next_reminder_at: null } };
  }
  let queued = 0;
  // A draft, pending or rejected event has no page to remind anyone of: its reminders pass.
  const due = isPublished(e) ? dueReminders(e, pgTimestampToMillis(e.next_reminder_at), now.getTime()) : [];
  const calendar: MailCalendarRow = { team_id: e.c_team_id, name: e.c_name, organizer_name: e.c_organizer_name, organizer_email: e.c_organizer_email, locale: e.c_locale };
  for (const { occurrence, minutes } of due) queued += await remind(trx, deps, { event: e, calendar }, occurrence, minutes, now);
  const next = nextReminder(e, now.getTime());
  await storeNextReminder(trx, e.id, next);
  return { queued, event: { uid: e.uid, next_reminder_at: reminderColumns(next).next_reminder_at } };
}

async function remind(trx: Knex, deps: SweepDeps, found: { event: DueRow; calendar: MailCalendarRow }, occurrence: Occurrence, minutes: number, now: Date): Promise<number> {
  const { event } = found;
  const inserted = await insertReminderDeliveries(trx, event, occurrence.startMs, minutes);
  // Nobody asked for these messages at this moment: over the team's quota they are skipped, not refused.
  const deliveries = (await applyMailQuota(trx, event.team_id, inserted, now, 'skip')).map((d) => ({
    ...d,
    links: { unsubscribe: unsubscribeUrl(deps.config.appKey, deps.config.publicBaseUrl, 'reminders', event.uid, d.email) },
  }));
  await queueDeliveries(trx, deps, { found, kind: 'reminder', sequence: event.sequence, deliveries, occurrence: occurrence.shown });
  return deliveries.length;
}

/**
 * The due events, oldest due first (`?`: now, then the batch size). Through the partial index
 * on next_reminder_at, it reads the due rows only, however many events there are
 * (test/scale/list-plans.test.ts explains it over 100,000).
 */
export const DUE_EVENTS_SQL = 'SELECT id FROM events WHERE next_reminder_at <= ? ORDER BY next_reminder_at LIMIT ?';

/** One sweep: up to REMINDER_SWEEP_BATCH due events, oldest due first. */
async function sweepReminders(deps: SweepDeps): Promise<SweepResult> {
  const now = deps.clock.now();
  const { rows } = await deps.db.raw(DUE_EVENTS_SQL, [now.toISOString(), deps.config.reminderSweepBatch]);
  const result: SweepResult = { events: 0, messages: 0 };
  for (const { id } of rows as Array<{ id: number }>) {
    try {
      const done = await remindEvent(deps, id, now);
      if (done === null) continue;
      result.events++;
      result.messages += done.queued;
    } catch (err) {
      // Redis or Postgres away: the rest waits for the next sweep too (nothing was stored).
      if (isDbUnavailableError(err) || isRedisUnavailableError(err) || (err instanceof AppError && err.status === 503)) throw err;
      deps.logger.warn({ err: (err as Error).message?.slice(0, 300), eventId: id }, 'could not send the reminders of an event; trying again at the next sweep');
    }
  }
  return result;
}

/**
 * The reminders queue's worker: each job is one event's next reminder, due now. It runs
 * that event as the sweep does (remindOne, in a transaction holding the row), so a job
 * whose event has moved, been deleted or been reminded by the sweep already finds nothing
 * due and does nothing; it then queues the event's next reminder.
 */
function reminderWorker(deps: SweepDeps): WorkerDefinition<ReminderJob, { event: string; messages: number } | null> {
  return {
    contract: reminderJob,
    concurrency: 4,
    process: async (job) => {
      const row: { id: number } | undefined = await deps.db('events').first('id').where({ uid: job.data.event });
      if (!row) return null;
      const done = await remindEvent(deps, row.id, deps.clock.now());
      return done && { event: job.data.event, messages: done.queued };
    },
  };
}

interface ReminderSweeper {
  /** One sweep now (tests; the timer's runs never overlap with it). */
  sweep(): Promise<SweepResult>;
  stop(): Promise<void>;
}

/**
 * Reminders in this process: the reminders queue's worker, which sends each event's reminder
 * when its delayed job comes due, and the sweep on its timer (REMINDER_SWEEP_MS; 0: none in
 * this process), the safety net that sends what no job did (one that could not be queued,
 * or lost with Redis). Each has its own producers.
 */
export function startReminderSweeper(ctx: WorkerContext): ReminderSweeper {
  const { config, logger } = ctx;
  const producer = new Producer(mailJob, ctx.redis, config.queuePrefix, logger, deploymentOf(ctx.db));
  const queues: Producers = {
    producer: <T extends object>(contract: JobContract<T>) => {
      if (contract.queue !== mailJob.queue) throw new Error(`the reminder sweep queues mail only, not ${contract.queue}`);
      return producer as unknown as Producer<T>;
    },
  };
  const reminders = new Producer(reminderJob, ctx.redis, config.queuePrefix, logger, deploymentOf(ctx.db));
  const deps: SweepDeps = { db: ctx.db, config, clock: ctx.clock, queues, logger, reminders };
  // The jobs of reminders due now, on a connection of their own (a worker's blocks).
  const connection = createRedis(config.redis, 'worker');
  connection.on('error', (err) => logger.debug({ err: err.message }, 'redis (reminders) connection error'));
  const worker = createWorker(reminderWorker(deps), ctx, connection);
  let running: Promise<SweepResult> | null = null;
  const sweep = (): Promise<SweepResult> => {
    running ??= sweepReminders(deps).finally(() => {
      running = null;
    });
    return running;
  };
  const tick = () => {
    sweep()
      .then((r) => {
        if (r.events) logger.info(r, 'reminders sent');
      })
      .catch((err: unknown) => logger.warn({ err: (err as Error).message?.slice(0, 300) }, 'could not sweep reminders; trying again'));
  };
  const timer = config.reminderSweepMs > 0 ? setInterval(tick, config.reminderSweepMs) : null;
  timer?.unref();
  return {
    sweep,
    async stop() {
      if (timer) clearInterval(timer);
      await worker.close();
      await running?.catch(() => undefined);
      await Promise.all([producer.close(), reminders.close()]);
      await closeRedis(connection);
    },
  };
}
