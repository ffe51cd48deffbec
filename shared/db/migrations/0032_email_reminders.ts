import type { Knex } from 'knex';
import { unbounded } from './unbounded';

/**
 * Email reminders before an event (docs/email.md, "Reminders").
 *
 * - `events.email_reminders`: minutes before each occurrence's start (empty: none), and
 *   `calendars.default_email_reminders`, what a new event of the calendar gets when it names
 *   none.
 * - `events.next_reminder_at`: when the next reminder is due (null: nothing to send), with
 *   the occurrence and the offset it belongs to. Written in the transaction of every change
 *   of the event and advanced by the mail worker's sweep, which reads only the due rows
 *   through the partial index `events_next_reminder` (events without reminders are not in
 *   it), so a sweep costs the same however many events there are.
 * - A reminder is a delivery row of kind `reminder` for (event, address, occurrence,
 *   offset), unique, so a sweep run again makes nothing twice. Other kinds keep their key
 *   (event, address, kind, SEQUENCE), now a partial index beside it.
 * - `reminder_optouts`: addresses that unsubscribed from one event's reminders (the link in
 *   each reminder, RFC 8058 one-click), in lower case.
 *
 * Built CONCURRENTLY, outside a transaction (as 0024 and 0026): events and deliveries can
 * still be written meanwhile; each step can run again after a run cut short.
 */
export const config = { transaction: false };

const KINDS = "'invitation', 'update', 'cancellation', 'removal', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no', 'rsvp_link'";

export async function up(knex: Knex): Promise<void> {
  await knex.raw("ALTER TABLE calendars ADD COLUMN IF NOT EXISTS default_email_reminders integer[] NOT NULL DEFAULT '{}'");
  await knex.raw(`ALTER TABLE events
    ADD COLUMN IF NOT EXISTS email_reminders integer[] NOT NULL DEFAULT '{}',
    ADD COLUMN IF NOT EXISTS next_reminder_at timestamptz,
    ADD COLUMN IF NOT EXISTS next_reminder_occurrence timestamptz,
    ADD COLUMN IF NOT EXISTS next_reminder_minutes integer`);
  await knex.raw('ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS occurrence_at timestamptz, ADD COLUMN IF NOT EXISTS reminder_minutes integer');
  await knex.raw(`ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_kind_check,
    ADD CONSTRAINT deliveries_kind_check CHECK (kind IN (${KINDS}, 'reminder')) NOT VALID`);
  await knex.raw('ALTER TABLE deliveries VALIDATE CONSTRAINT deliveries_kind_check');
  await knex.raw(`CREATE TABLE IF NOT EXISTS reminder_optouts (
    event_id bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    email text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, email)
  )`);
  await unbounded(knex, [
    'DROP INDEX CONCURRENTLY IF EXISTS events_next_reminder',
    'CREATE INDEX CONCURRENTLY events_next_reminder ON events (next_reminder_at) WHERE next_reminder_at IS NOT NULL',
    'DROP INDEX CONCURRENTLY IF EXISTS deliveries_reminder',
    "CREATE UNIQUE INDEX CONCURRENTLY deliveries_reminder ON deliveries (event_id, lower(email), occurrence_at, reminder_minutes) WHERE kind = 'reminder'",
    'DROP INDEX CONCURRENTLY IF EXISTS deliveries_message_once',
    "CREATE UNIQUE INDEX CONCURRENTLY deliveries_message_once ON deliveries (event_id, lower(email), kind, sequence) WHERE kind <> 'reminder'",
    'DROP INDEX CONCURRENTLY IF EXISTS deliveries_message',
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("DELETE FROM deliveries WHERE kind = 'reminder'");
  await unbounded(knex, [
    'CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS deliveries_message ON deliveries (event_id, lower(email), kind, sequence)',
    'DROP INDEX CONCURRENTLY IF EXISTS deliveries_message_once',
    'DROP INDEX CONCURRENTLY IF EXISTS deliveries_reminder',
    'DROP INDEX CONCURRENTLY IF EXISTS events_next_reminder',
  ]);
  await knex.raw(`ALTER TABLE deliveries DROP CONSTRAINT deliveries_kind_check, ADD CONSTRAINT deliveries_kind_check CHECK (kind IN (${KINDS}))`);
  await knex.raw('DROP TABLE IF EXISTS reminder_optouts');
  await knex.raw('ALTER TABLE deliveries DROP COLUMN IF EXISTS occurrence_at, DROP COLUMN IF EXISTS reminder_minutes');
  await knex.raw('ALTER TABLE events DROP COLUMN IF EXISTS email_reminders, DROP COLUMN IF EXISTS next_reminder_at, DROP COLUMN IF EXISTS next_reminder_occurrence, DROP COLUMN IF EXISTS next_reminder_minutes');
  await knex.raw('ALTER TABLE calendars DROP COLUMN IF EXISTS default_email_reminders');
}
