import type { Knex } from '../../shared/db/knex';
import { newUid } from '../../shared/ids/ids';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';

export { dropPrefix } from '../helpers/service-processes';

/**
 * Shared by the security tests: a gateway of their own, a team holding one object of every
 * kind, the operations of the OpenAPI document, and a fingerprint of a team's rows.
 */

export const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

/**
 * A queue prefix of the file's own: no other test's worker takes its jobs and its rate-limit
 * counters are its own. The per-link smart-link limit is out of the way (it is tested
 * elsewhere; testEnv lifts the per-address ones for every test); teams are on the unlimited
 * plan for the same reason.
 */
export function securityPrefix(name: string): string {
  return isolatedPrefix(`sec_${name}`);
}

export function startSecurityGateway(name: string, env: Record<string, string> = {}): Promise<TestGateway> {
  return startGateway({
    QUEUE_PREFIX: securityPrefix(name),
    SMART_LINK_RATE_PER_MINUTE: '1000000',
    ...env,
  });
}

export const ID_KINDS = ['cal', 'evt', 'ext', 'inv', 'sl', 'sls', 'dk', 'sub', 'rsvp', 'wh', 'whd', 'tok', 'usr'] as const;
export type IdKind = (typeof ID_KINDS)[number];
export type Ids = Record<IdKind, string>;

/** A well-formed id of that kind that names nothing. */
export const unknownId = (kind: IdKind) => `${kind}_${newUid()}`;
export const unknownIds = (): Ids => Object.fromEntries(ID_KINDS.map((k) => [k, unknownId(k)])) as Ids;

export interface Seeded {
  team: TestTeam;
  ids: Ids;
  calendar: { uid: string; public_id: string; public_url: string };
  event: { uid: string; public_id: string; public_url: string; short_link: string };
  link: { id: string; key: string; url: string; signing_secret: string };
  feedToken: string;
  /** Every secret or uid of the team's objects, bare (no prefix): none may show up in another team's answers. */
  uids: string[];
}

const bare = (publicId: string) => publicId.slice(publicId.indexOf('_') + 1);

async function ok<T = Record<string, unknown>>(what: string, res: Promise<{ status: number; body: { data: T }; text: string }>, status = 200): Promise<T> {
  const r = await res;
  if (r.status !== status) throw new Error(`seeding ${what}: ${r.status} ${r.text.slice(0, 500)}`);
  return r.body.data;
}

/**
 * One object of every kind, made through the API: a calendar, an event with RSVPs and a
 * short link, an invitee, an RSVP, a subscriber, an extraction, a smart link with one
 * submission, and a dynamic-link key. With `awaitSubmission`, waits for a smart-link worker
 * (the caller runs one) to record the submission.
 */
export async function seedTeam(gw: TestGateway, team: TestTeam, opts: { awaitSubmission?: boolean; link?: Record<string, unknown> } = {}): Promise<Seeded> {
  const mark = newUid().slice(0, 8);
  const calendar = await ok<Seeded['calendar']>('calendar', team.api.post('/api/calendars', { name: `Calendar ${mark}`, timezone: 'UTC' }));
  const event = await ok<Seeded['event']>(
    'event',
    team.api.post(`/api/calendars/${calendar.public_id}/events`, {
      title: `Event ${mark}`,
      internal_name: `internal ${mark}`,
      date_start: '2031-03-01 10:00',
      date_end: '2031-03-01 11:00',
      timezone: 'UTC',
      has_rsvp: true,
      short_link: `s-${mark}-${newUid().slice(0, 6)}`,
    }),
  );
  const eventPath = `/api/calendars/${calendar.public_id}/events/${event.public_id}`;
  const invitees = await ok<Array<{ id: string }>>('invitee', team.api.post(`${eventPath}/invites`, { invitees: [{ email: `guest-${mark}@example.com`, name: 'Guest' }] }));
  // An answer is received (202) without its id or key: the team's list has it.
  await ok('rsvp', gw.anon.post(`/e/${event.uid}/rsvp`, { name: 'Ann', email: `ann-${mark}@example.com`, answer: 'yes' }), 202);
  const [rsvp] = await ok<Array<{ id: string }>>('rsvps', team.api.get(`${eventPath}/rsvps`));
  const subscribed = await fetch(`${calendar.public_url}/subscribe/ics`, { method: 'POST', redirect: 'manual', headers: { 'User-Agent': BROWSER_UA } });
  if (subscribed.status !== 303) throw new Error(`seeding subscriber: ${subscribed.status}`);
  const [subscriber] = await ok<Array<{ id: string; feed_url: string }>>('subscribers', team.api.get(`/api/calendars/${calendar.public_id}/subscribers`));
  const feedToken = /\/feeds\/(\w+)\.ics$/.exec(subscriber.feed_url)?.[1] as string;
  const extraction = await ok<{ id: string }>('extraction', team.api.post('/api/events/extract', { text: `Planning ${mark} on 2031-04-01 at 10:00`, timezone: 'UTC' }), 202);
  const link = await ok<Seeded['link']>('smart link', team.api.post('/api/smart-links', { name: `Form ${mark}`, calendar: calendar.public_id, ...opts.link }));
  const submitted = await fetch(link.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ title: `Submitted ${mark}`, start: '2031-05-01 09:00' }),
  });
  if (submitted.status !== 202) throw new Error(`seeding submission: ${submitted.status} ${await submitted.text()}`);
  const submission = ((await submitted.json()) as { data: { id: string } }).data.id;
  // An address that bounced for good (the mail tests make one through a real SMTP refusal).
  const suppressed = `bounced-${mark.toLowerCase()}@example.com`;
  await gw.db('mail_suppressions').insert({ team_id: team.teamId, email: suppressed, reason: '550 5.1.1 User unknown' });
  const webhook = await ok<{ id: string; secret: string }>('webhook', team.api.post('/api/webhooks', { url: `https://hooks.example.com/${mark}` }));
  const { delivery_id: delivery } = await ok<{ delivery_id: string }>('webhook test', team.api.post(`/api/webhooks/${webhook.id}/test`, {}), 202);
  const uids = [calendar.uid, event.uid, event.short_link, feedToken, link.key, suppressed, webhook.secret.slice('whsec_'.length), ...[invitees[0].id, rsvp.id, subscriber.id, extraction.id, link.id, submission, webhook.id, delivery].map(bare)];
  if (opts.awaitSubmission) {
    const outcome = await waitFor(
      async () => {
        const res = await team.api.get(`/api/smart-link-submissions/${submission}`);
        return res.status === 200 && res.body.data.status !== 'queued' ? (res.body.data as { event_public_id: string | null }) : undefined;
      },
      { what: `the outcome of ${submission}`, timeoutMs: 15_000 },
    );
    if (outcome.event_public_id) uids.push(bare(outcome.event_public_id));
  }
  const key = await ok<{ id: string }>('dynamic link', team.api.post('/api/dynamic-links', { name: `Key ${mark}` }));
  uids.push(bare(key.id));
  // A second API token and a member invited by email (its message waits in the queue).
  const token = await ok<{ id: string }>('API token', team.api.post('/api/tokens', { name: `Token ${mark}` }));
  const member = await ok<{ id: string }>('member', team.api.post('/api/members', { email: `member-${mark.toLowerCase()}@example.com`, role: 'member' }));
  uids.push(bare(token.id), bare(member.id));
  // An unlimited team's usage row is written in batches: reading the account writes it now,
  // so it does not appear in the middle of a test that compares the team's rows.
  await ok('account', team.api.get('/api/account'));
  return {
    team,
    ids: { cal: calendar.public_id, evt: event.public_id, ext: extraction.id, inv: invitees[0].id, sl: link.id, sls: submission, dk: key.id, sub: subscriber.id, rsvp: rsvp.id, wh: webhook.id, whd: delivery, tok: token.id, usr: member.id },
    calendar,
    event,
    link,
    feedToken,
    uids,
  };
}

// ---- the OpenAPI document ---------------------------------------------------------------

export type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; enum?: unknown[]; type?: string | string[]; items?: JsonSchema };

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  /** `GET /api/calendars/{cal}` */
  key: string;
  method: string;
  path: string;
  auth: boolean;
  /** Path parameters that appear in the path, in order. */
  pathParams: Parameter[];
  query: Parameter[];
  body: { contentTypes: string[]; schema: JsonSchema } | null;
  statuses: number[];
}

type DocOperation = {
  parameters?: Parameter[];
  security?: unknown[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, unknown>;
};

/** Every operation of the document, as the security tests need them. */
export function operations(openapi: Record<string, unknown>): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(openapi.paths as Record<string, Record<string, DocOperation>>)) {
    const inPath = [...path.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries(methods)) {
      // One middleware answers OPTIONS on every path (204 and Allow, no input read): system.test.ts.
      if (method === 'options') continue;
      const params = op.parameters ?? [];
      const content = op.requestBody?.content;
      out.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        auth: (op.security ?? []).length > 0,
        pathParams: inPath.map((name) => params.find((p) => p.in === 'path' && p.name === name) ?? { name, in: 'path', required: true, schema: {} }),
        query: params.filter((p) => p.in === 'query'),
        body: content ? { contentTypes: Object.keys(content), schema: Object.values(content)[0].schema } : null,
        statuses: Object.keys(op.responses).map(Number),
      });
    }
  }
  return out;
}

/** The path with its parameters filled in (encoded). */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^{}]+)\}/g, (_m, name: string) => {
    if (values[name] === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return encodeURIComponent(values[name]);
  });
}

// ---- a team's rows ----------------------------------------------------------------------

/** Columns that change on their own after a request (counters written in batches, last use). */
const VOLATILE = ['last_used_at', 'last_seen_at', 'uses', 'sync_count', 'last_synced_at', 'events_created'];

const TEAM_TABLES = [
  'api_tokens', 'calendars', 'events', 'extractions', 'invitees', 'deliveries', 'rsvps', 'subscribers',
  'smart_links', 'smart_link_submissions', 'dynamic_links', 'team_usage', 'users', 'sessions',
];

/**
 * A fingerprint of everything a team has: every row of every table it owns (and its short
 * links), so any insert, update or delete changes it.
 */
export async function teamDigest(db: Knex, teamId: number): Promise<string> {
  const drop = VOLATILE.map((c) => ` - '${c}'`).join('');
  const parts = TEAM_TABLES.map(
    (t) => `SELECT '${t}' AS t, coalesce((SELECT jsonb_agg(j ORDER BY j::text) FROM (SELECT to_jsonb(x)${drop} AS j FROM ${t} x WHERE x.team_id = :team) r), '[]')::text AS rows`,
  );
  parts.push(`SELECT 'teams', coalesce(jsonb_agg(to_jsonb(x)), '[]')::text FROM teams x WHERE x.id = :team`);
  parts.push(
    `SELECT 'short_links', coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.slug), '[]')::text FROM short_links x
      WHERE x.event_id IN (SELECT id FROM events WHERE team_id = :team) OR x.calendar_id IN (SELECT id FROM calendars WHERE team_id = :team)`,
  );
  const { rows } = await db.raw(`SELECT md5(string_agg(t || rows, '|' ORDER BY t)) AS digest FROM (${parts.join(' UNION ALL ')}) s`, { team: teamId });
  return rows[0].digest as string;
}

/** How many rows the team has in each of its tables (to say what changed when a digest differs). */
export async function teamCounts(db: Knex, teamId: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of TEAM_TABLES) out[t] = Number((await db(t).where({ team_id: teamId }).count('* as n').first())?.n ?? 0);
  return out;
}
