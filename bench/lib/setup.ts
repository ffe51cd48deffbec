import { createTeamWithOwner, type PlanId } from '../../shared/accounts/accounts.repository';
import { createDb, dropDatabase, type Knex } from '../../shared/db/knex';
import { prepareDatabase } from '../../shared/db/prepare';

/** A fresh database per benchmark, on the server of DATABASE_URL (or the local default). */
export async function freshDatabase(name: string): Promise<{ url: string; db: Knex }> {
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/calendar');
  url.pathname = `/calendar_bench_${name}`;
  await dropDatabase(url.toString());
  await prepareDatabase(url.toString());
  return { url: url.toString(), db: createDb(url.toString(), { poolMax: 4, statementTimeoutMs: 0 }) };
}

export async function benchTeam(db: Knex, plan: PlanId = 'unlimited') {
  return createTeamWithOwner(db, { name: 'Bench', email: `bench-${Date.now()}@example.test`, plan });
}

export const benchEnv = (databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  NODE_ENV: 'production',
  APP_KEY: 'bench-app-key-0123456789abcdef0123456789',
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  LOG_LEVEL: 'info',
  ...extra,
});

/**
 * Seeds `count` events into a calendar with one INSERT … SELECT: a spread of dates from a
 * year ago to two years ahead, and one title in a thousand containing "summit".
 */
export async function seedEvents(db: Knex, teamId: number, calendarId: number, count: number): Promise<void> {
  await db.raw(
    `INSERT INTO events (uid, team_id, calendar_id, title, internal_name, date_start, date_end, ends_at, timezone, has_rsvp, description)
     SELECT substr(md5(random()::text || i::text), 1, 16), ?, ?,
            CASE WHEN i % 1000 = 0 THEN 'Quarterly summit ' || i ELSE (ARRAY['Standup','Review','Launch','Offsite','Lunch'])[i % 5 + 1] || ' ' || i END,
            CASE WHEN i % 7 = 0 THEN 'internal-' || i END,
            ts, ts + interval '1 hour', ts + interval '1 hour', 'America/New_York', i % 3 = 0,
            '<p>Seeded event number ' || i || '</p>'
       FROM generate_series(1, ?) AS i,
            LATERAL (SELECT now() - interval '365 days' + (i * (interval '1095 days' / ?)) AS ts) t`,
    [teamId, calendarId, count, count],
  );
}
