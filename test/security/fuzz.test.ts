import fc from 'fast-check';
import type { ApiResponse } from '../helpers/api-client';
import type { TestGateway } from '../helpers/gateway';
import { dropPrefix, type JsonSchema, type Operation, operations, securityPrefix, type Seeded, seedTeam, startSecurityGateway, teamCounts, teamDigest } from './fixtures';
import { deeplyNested, deeplyNestedJson, encode, hostileFor, hostileString, isDotSegment, RAW_URL_PIECES } from './hostile';

/**
 * Property-based fuzzing (fast-check) of every operation of the OpenAPI document that takes
 * input (a body, path or query parameters), the public ones included. Whatever comes in:
 * never a 5xx, always a documented status and error shape (the ApiClient checks every answer
 * against the document: `{"message"}`, 422s with `errors`), and a refused request (4xx)
 * leaves the team's rows exactly as they were. The seed is fixed so a failure reproduces;
 * FUZZ_SEED and FUZZ_RUNS change the seed and the runs per operation, and a failure prints
 * the seed, the path to replay and the request that failed: FUZZ_ONLY='POST /api/events'
 * FUZZ_SEED=… FUZZ_PATH=… replays it, FUZZ_SHRINK=1 shrinks it.
 */

const NAME = 'fuzz';
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_801);
const RUNS = Number(process.env.FUZZ_RUNS ?? 50);
jest.setTimeout(180_000);

let gw: TestGateway;
let fuzzed: Operation[];

beforeAll(async () => {
  gw = await startSecurityGateway(NAME);
  fuzzed = operations(gw.openapi).filter((op) => (op.body || op.pathParams.length || op.query.length) && (!process.env.FUZZ_ONLY || op.key === process.env.FUZZ_ONLY));
});
afterAll(async () => {
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await gw?.close();
});

interface FuzzRequest {
  method: string;
  url: string;
  accept: string;
  contentType?: string;
  body?: string;
}

// ---- values that pass validation, so the hostile ones get past the first check --------

function validByName(seed: Seeded): Record<string, fc.Arbitrary<unknown>> {
  const c = fc.constant;
  return {
    title: fc.constantFrom('Fuzz', 'Réunion 😀'),
    name: c('Fuzz'),
    internal_name: c('internal'),
    description: fc.constantFrom('Plain text', '<p>Some <b>HTML</b></p>'),
    location: c('Main street 1'),
    date_start: c('2031-02-01 10:00'),
    date_end: c('2031-02-01 11:00'),
    start: fc.constantFrom('2031-02-01 10:00', '2031-02-01', '2031-02-01T10:00:00Z'),
    end: c('2031-02-01 12:00'),
    start_date: c('2031-01-01'),
    end_date: c('2031-12-31'),
    reference_date: c('2031-01-01 09:00'),
    timezone: fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York'),
    calendar: c(seed.ids.cal),
    text: c('Lunch with Sam on 2031-05-01 at noon at Cafe Luna'),
    email: c('fuzz@example.com'),
    answer: fc.constantFrom('yes', 'maybe', 'no'),
    access_code: c('open-sesame'),
    invitees: c([{ email: 'guest@example.com', name: 'Guest' }]),
    recurrence_rule: c('FREQ=WEEKLY;COUNT=3'),
    recurring: c('FREQ=WEEKLY;COUNT=3'),
    location_url: c('https://example.com/where'),
    image_url: c('https://example.com/a.png'),
    short_link: fc.string({ minLength: 4, maxLength: 12, unit: fc.constantFrom(...'abcdefghijkmnpqrstuvwxyz0123456789-') }),
    uid: c(seed.ids.dk),
    client: c(seed.ids.dk),
    // The extraction long-poll would wait for a worker this file does not run.
    wait: c(0),
    cursor: fc.constantFrom('1', 'MQ'),
    search: fc.string({ maxLength: 10 }),
  };
}

/** A value the schema accepts, when it says enough; else undefined. */
function validBySchema(schema: JsonSchema | undefined): fc.Arbitrary<unknown> | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum) && schema.enum.length) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'boolean') return fc.boolean();
  if (type === 'integer') return fc.integer({ min: Number(schema.minimum ?? 0), max: Math.min(Number(schema.maximum ?? 1000), 1000) });
  if (type === 'string') return fc.string({ minLength: Number(schema.minLength ?? 1), maxLength: Math.min(Number(schema.maxLength ?? 20), 20) });
  return undefined;
}

function fieldValue(name: string, schema: JsonSchema | undefined, seed: Seeded): fc.Arbitrary<unknown> {
  const valid = validByName(seed)[name] ?? validBySchema(schema);
  return valid ? fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: hostileFor(name) }) : hostileFor(name);
}

/**
 * Mostly a valid input with one to three fields made hostile, so each hostile value gets
 * past the other fields' checks and meets the code (and the database) behind them; now and
 * then any mix of fields.
 */
function mutatedRecord(fields: Array<[string, JsonSchema | undefined]>, required: string[], seed: Seeded): fc.Arbitrary<Record<string, unknown>> {
  if (!fields.length) return fc.constant({});
  const validOf = (name: string, schema: JsonSchema | undefined) => validByName(seed)[name] ?? validBySchema(schema);
  const valid = fc.record(
    Object.fromEntries(fields.flatMap(([name, schema]) => (validOf(name, schema) ? [[name, validOf(name, schema) as fc.Arbitrary<unknown>]] : []))),
    { requiredKeys: required.filter((name) => fields.some(([n, sch]) => n === name && validOf(n, sch))) },
  );
  const names = fields.map(([name]) => name);
  const mutated = fc
    .tuple(valid, fc.subarray(names, { minLength: 1, maxLength: Math.min(3, names.length) }).chain((chosen) => fc.tuple(...chosen.map((name) => hostileFor(name).map((v) => [name, v] as const)))))
    .map(([base, hostile]) => ({ ...base, ...Object.fromEntries(hostile) }));
  const mixed = fc.record(Object.fromEntries(fields.map(([name, schema]) => [name, fieldValue(name, schema, seed)])), { requiredKeys: [] });
  return fc.oneof({ weight: 7, arbitrary: mutated }, { weight: 2, arbitrary: mixed }, { weight: 1, arbitrary: valid });
}

// ---- requests --------------------------------------------------------------------------

/**
 * URLs stay under Node's 16 KiB limit for a request head (beyond it Node itself answers 431
 * before any of our code runs; body-limits.test.ts covers that): long values go in bodies.
 */
const URL_PART = 200;
const URL_MAX = 12_000;
const urlString = hostileString.map((s) => s.slice(0, URL_PART));

/** Valid values of a path parameter: the team's own ids, or what the schema allows. */
function pathValues(op: Operation, name: string, seed: Seeded & { protectedUid: string }): string[] {
  const ids = seed.ids as Record<string, string>;
  if (ids[name]) return [ids[name]];
  const schema = op.pathParams.find((p) => p.name === name)?.schema;
  if (Array.isArray(schema?.enum)) return schema.enum.map(String);
  if (name === 'uid') return op.path.startsWith('/e/') ? [seed.event.uid, seed.protectedUid] : [seed.calendar.uid];
  if (name === 'key') return [seed.link.key];
  if (name === 'token') return [seed.feedToken];
  if (name === 'slug') return [seed.event.short_link];
  throw new Error(`no valid value for {${name}} of ${op.key}: add one to pathValues`);
}

function pathArb(op: Operation, seed: Seeded & { protectedUid: string }): fc.Arbitrary<string> {
  const segments = op.pathParams.map((p) =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...pathValues(op, p.name, seed)).map(encode) },
      { weight: 2, arbitrary: urlString.map(encode).filter((s) => s.length > 0 && !isDotSegment(s)) },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_PIECES) },
    ),
  );
  return fc.tuple(...segments).map((values) => {
    let i = 0;
    return op.path.replace(/\{[^{}]+\}/g, () => values[i++]);
  });
}

function queryArb(op: Operation, seed: Seeded): fc.Arbitrary<string> {
  const fields: Array<[string, JsonSchema | undefined]> = op.query.map((p) => [p.name, p.schema]);
  const required = op.query.filter((p) => p.required).map((p) => p.name);
  const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '').slice(0, URL_PART);
  const pairs = mutatedRecord(fields, required, seed).map((record) => Object.entries(record).map(([k, v]) => `${k}=${encode(asText(v))}`));
  const extra = fc.oneof(
    { weight: 8, arbitrary: fc.constant<string[]>([]) },
    // a name twice (an array to the parser), broken escapes, odd names
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...(fields.length ? fields.map(([n]) => n) : ['x'])), urlString, urlString).map(([n, x, y]) => [`${n}=${encode(x)}`, `${n}=${encode(y)}`]) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...(fields.length ? fields.map(([n]) => n) : ['x'])), fc.constantFrom(...RAW_URL_PIECES)).map(([n, raw]) => [`${n}=${raw}`]) },
    { weight: 1, arbitrary: fc.constantFrom(['&&=&'], ['a[b]=c', '__proto__[x]=1'], ['%=%'], ['=x'], ['x'.repeat(5000)]) },
  );
  return fc.tuple(pairs, extra).map(([chosen, more]) => {
    const parts = [...chosen, ...more];
    return parts.length ? `?${parts.join('&')}` : '';
  });
}

const asFormValue = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');

function encodeBody(contentType: string, value: unknown): string {
  if (contentType === 'application/json') return JSON.stringify(value) ?? 'null';
  const entries: Array<[string, unknown]> = value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [['value', value]];
  if (contentType === 'application/x-www-form-urlencoded') return entries.map(([k, v]) => `${encode(k)}=${encode(asFormValue(v))}`).join('&');
  // multipart/form-data, boundary below
  return entries.map(([k, v]) => `--FuzzBoundary\r\nContent-Disposition: form-data; name="${k.replace(/["\r\n]/g, '_')}"\r\n\r\n${asFormValue(v)}\r\n`).join('') + '--FuzzBoundary--\r\n';
}

function bodyArb(op: Operation, seed: Seeded): fc.Arbitrary<{ contentType?: string; body?: string }> {
  if (!op.body) return fc.constant({});
  const props = Object.entries(op.body.schema.properties ?? {});
  const required = (op.body.schema.required as string[] | undefined) ?? [];
  const record = mutatedRecord(props, required, seed);
  const value = fc.oneof(
    { weight: 10, arbitrary: record },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 1, arbitrary: deeplyNested },
    { weight: 1, arbitrary: fc.array(record, { maxLength: 3 }) },
  );
  const types = op.body.contentTypes;
  const encoded = fc.tuple(fc.constantFrom(...types), value).map(([type, v]) => ({
    contentType: type === 'multipart/form-data' ? 'multipart/form-data; boundary=FuzzBoundary' : type,
    body: encodeBody(type, v),
  }));
  const rawText = fc.oneof(hostileString, deeplyNestedJson, deeplyNestedJson.map((deep) => `{"${props[0]?.[0] ?? 'a'}":${deep}}`));
  const raw = fc.tuple(fc.constantFrom(...types), rawText).map(([contentType, body]) => ({ contentType, body }));
  return fc.oneof({ weight: 12, arbitrary: encoded }, { weight: 1, arbitrary: raw }, { weight: 1, arbitrary: fc.constant({}) });
}

function requestArb(op: Operation, seed: Seeded & { protectedUid: string }): fc.Arbitrary<FuzzRequest> {
  const accept = op.auth ? fc.constant('application/json') : fc.constantFrom('application/json', 'text/html', '*/*');
  return fc.tuple(pathArb(op, seed), queryArb(op, seed), bodyArb(op, seed), accept).map(([path, query, body, acceptType]) => ({
    method: op.method,
    url: (path + query).length > URL_MAX ? path : path + query,
    accept: acceptType,
    ...body,
  }));
}

// ---- the property ----------------------------------------------------------------------

async function fuzzTeam(op: Operation) {
  const team = await gw.newTeam({ plan: 'unlimited' });
  const seed = await seedTeam(gw, team, { link: { requires_approval: true } });
  const locked = await team.api.post(`/api/calendars/${seed.ids.cal}/events`, {
    title: 'Locked',
    date_start: '2031-03-02 10:00',
    date_end: '2031-03-02 11:00',
    timezone: 'UTC',
    has_rsvp: true,
    access_code: 'open-sesame',
  });
  if (locked.status !== 200) throw new Error(`could not make a protected event for ${op.key}: ${locked.text}`);
  return { ...seed, protectedUid: locked.body.data.uid as string };
}

/**
 * Sends one request and checks its answer. `rows` holds the team's fingerprint as the last
 * request left it (every write of a request is done when it answers; nothing runs in the
 * background here: no worker takes this file's jobs, and batched counters are left out).
 */
async function check(op: Operation, team: { teamId: number; token: string }, rows: { digest: string }, req: FuzzRequest): Promise<void> {
  const client = gw.anon.as(op.auth ? team.token : null);
  const what = `${req.method} ${req.url.slice(0, 300)}${req.body === undefined ? '' : ` (${req.contentType}: ${req.body.slice(0, 200)})`}`;
  let res: ApiResponse;
  try {
    res = await client.request(req.method, req.url, {
      headers: { Accept: req.accept, 'User-Agent': 'Mozilla/5.0 (fuzz)' },
      ...(req.body !== undefined ? { raw: req.body, contentType: req.contentType } : {}),
    });
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`, { cause: err });
  }
  if (res.status >= 500) throw new Error(`${what} answered ${res.status}: ${res.text.slice(0, 300)}`);
  const after = await teamDigest(gw.db, team.teamId);
  if (res.status >= 400 && after !== rows.digest) {
    throw new Error(`${what} answered ${res.status} but changed the team's rows (now ${JSON.stringify(await teamCounts(gw.db, team.teamId))})`);
  }
  rows.digest = after;
}

/** Fuzzes one operation on a team of its own; answers a failure report, or null. */
async function fuzzOperation(op: Operation): Promise<string | null> {
  const seed = await fuzzTeam(op);
  const rows = { digest: await teamDigest(gw.db, seed.team.teamId) };
  const run = await fc.check(
    fc.asyncProperty(requestArb(op, seed), (req) => check(op, seed.team, rows, req)),
    { numRuns: RUNS, seed: SEED, path: process.env.FUZZ_PATH, endOnFailure: process.env.FUZZ_SHRINK !== '1' },
  );
  return run.failed ? `${op.key} (seed ${run.seed}, path ${run.counterexamplePath}): ${(run.errorInstance as Error | undefined)?.message ?? 'failed'}` : null;
}

it('fuzzes every operation that takes input: no 5xx, documented answers, no half-written rows', async () => {
  if (!process.env.FUZZ_ONLY) expect(fuzzed.length).toBeGreaterThan(40);
  // A few operations at a time (each on its own team): the requests wait on the network and Postgres.
  const queue = [...fuzzed];
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let op = queue.shift(); op; op = queue.shift()) {
        const failure = await fuzzOperation(op);
        if (failure) failures.push(failure);
      }
    }),
  );
  expect(failures).toEqual([]);
});

describe('inputs that once answered 500 or stored something wrong', () => {
  const yearZeroCursor = Buffer.from(JSON.stringify(['0000-01-01 00:00:00', 1])).toString('base64url');
  it.each<[string, string, string, unknown, number]>([
    ['a null character in a stored text', 'POST', '/api/calendars', { name: 'a\u0000b', timezone: 'UTC' }, 422],
    ['a null character in a description', 'POST', '/api/events', { title: 'x', start: '2031-01-01', description: 'x\u0000y' }, 422],
    ['a null character in a nested field', 'POST', '/api/events/extract', { text: 'Lunch tomorrow at noon \u0000 at the cafe', timezone: 'UTC' }, 422],
    ['a null character in a search', 'GET', '/api/events?search=%00', undefined, 422],
    ['the year 0000', 'POST', '/api/events', { title: 'x', start: '0000-01-01' }, 422],
    ['a year that Date.UTC reads as 19xx', 'POST', '/api/events', { title: 'x', start: '0001-01-01 00:00' }, 422],
    ['an end past the year 9999', 'POST', '/api/events', { title: 'x', start: '9999-12-31', timezone: 'Etc/GMT+12' }, 422],
    ['an all-day start that is a day of the year 10000', 'POST', '/api/events', { title: 'x', start: '9999-12-31T23:59:59-14:00', end: '2031-02-01', is_all_day: true, timezone: 'UTC' }, 422],
    ['a reference date past the year 9999', 'POST', '/api/events/extract', { text: 'Lunch tomorrow at noon', timezone: 'UTC', reference_date: '9999-12-31T23:59:59-14:00' }, 422],
    ['a filter date past the year 9999', 'GET', '/api/events?start_date=9999-12-31T23:59:59-14:00', undefined, 200],
    ['a forged cursor in the year 0', 'GET', `/api/events?cursor=${yearZeroCursor}`, undefined, 422],
  ])('%s (%s %s)', async (_what, method, path, body, status) => {
    const team = await gw.newTeam({ plan: 'unlimited' });
    await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' });
    const before = await teamDigest(gw.db, team.teamId);
    const res = await team.api.request(method, path, { body });
    expect(res.status).toBe(status);
    if (status >= 400) expect(await teamDigest(gw.db, team.teamId)).toBe(before);
  });

  it.each(['/l/%00', '/c/%00', '/c/%00.ics', '/c/%00/subscribe/google'])('%s is a 404, not a query with a null character', async (path) => {
    const res = await gw.anon.get(path);
    expect(res.status).toBe(404);
    expect(res.body.message).toEqual(expect.any(String));
  });

  it('a form sent back with an object where a name was expected is a 422 page, not a 500', async () => {
    const team = await gw.newTeam({ plan: 'unlimited' });
    const cal = (await team.api.post('/api/calendars', { name: 'Asks', timezone: 'UTC', ask_subscriber_details: true })).body.data;
    const res = await gw.anon.post(`/c/${cal.uid}/subscribe/google`, { name: { toString: 'x' }, email: 'bad' }, { headers: { Accept: 'text/html' } });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('an update refused for a short link already taken changes nothing, not even the other fields', async () => {
    // A limited plan: an unlimited team's usage is counted in memory and written every two
    // seconds, which could land between the two digests.
    const team = await gw.newTeam({ plan: 'business' });
    const slug = `taken-${Date.now().toString(36)}`;
    const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
    const other = (await team.api.post('/api/calendars', { name: 'Other', timezone: 'UTC' })).body.data;
    const event = { date_start: '2031-01-01 10:00', date_end: '2031-01-01 11:00', timezone: 'UTC' };
    await team.api.post(`/api/calendars/${cal.public_id}/events`, { ...event, title: 'Holder', short_link: slug });
    const target = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { ...event, title: 'Target' })).body.data;
    const before = await teamDigest(gw.db, team.teamId);
    const refused = [
      await team.api.put(`/api/calendars/${cal.public_id}/events/${target.public_id}`, { ...event, title: 'Changed', location: 'Elsewhere', short_link: slug.toUpperCase() }),
      await team.api.put(`/api/calendars/${other.public_id}`, { name: 'Renamed', timezone: 'Asia/Tokyo', short_link: slug }),
      await team.api.post(`/api/calendars/${cal.public_id}/events`, { ...event, title: 'Another', short_link: slug }),
    ];
    expect(refused.map((r) => [r.status, Object.keys(r.body.errors ?? {})])).toEqual([
      [422, ['short_link']],
      [422, ['short_link']],
      [422, ['short_link']],
    ]);
    expect(await teamDigest(gw.db, team.teamId)).toBe(before);
  });

  it('POST /api/events for a team without a calendar makes "My Calendar" only when the event is made', async () => {
    const team = await gw.newTeam({ plan: 'unlimited' });
    const before = await teamDigest(gw.db, team.teamId);
    const refused = await team.api.post('/api/events', { title: 'x', start: '2031-01-02 10:00', end: '2031-01-01 10:00' });
    expect(refused.status).toBe(422);
    expect(await teamDigest(gw.db, team.teamId)).toBe(before);
    const made = await team.api.post('/api/events', { title: 'x', start: '2031-01-02 10:00', timezone: 'Asia/Tokyo' });
    expect(made.status).toBe(200);
    expect(made.body.data.calendar).toMatchObject({ name: 'My Calendar', timezone: 'Asia/Tokyo' });
  });
});
