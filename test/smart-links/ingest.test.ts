import { Queue } from 'bullmq';
import { signPayload } from '../../shared/webhooks/signature';
import { groupJobId, smartLinkJob } from '../../shared/queues/smart-link.job';
import { indexQueued, queuedEntry } from '../../shared/queues/submission-index';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import type { TestWorker } from '../helpers/workers';
import { type Link, newLink, outcomeOf, startSmartLinkWorker, submitForm } from './helpers';
import { isolatedPrefix } from '../helpers/service-processes';

let gw: TestGateway;
let team: TestTeam;
let worker: TestWorker<unknown, unknown>;
let queue: Queue;

/** The file's own queue: what it counts as added (see addedSince) is its own, not also other files'. */
const prefix = isolatedPrefix('ingest');

beforeAll(async () => {
  gw = await startGateway({ QUEUE_PREFIX: prefix });
  team = await gw.newTeam();
  worker = (await startSmartLinkWorker({ QUEUE_PREFIX: prefix })) as TestWorker<unknown, unknown>;
  queue = new Queue(smartLinkJob.queue, { connection: gw.redis, prefix: gw.config.queuePrefix });
});
afterAll(async () => {
  await worker.close();
  await gw.close();
});

const form = { title: 'Intro call', start: '2030-03-10 14:00', duration: '30', location: 'Zoom', description: 'From the website', email: 'ignored@example.com' };
/**
 * A mark in the queue's event log; `addedSince(mark)` lists the ids of the jobs added after
 * it. A group's job is removed once done, so the jobs still in Redis do not tell what was
 * queued; the log does.
 */
const queueMark = async () => (await gw.redis.xrevrange(queue.keys.events, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
const addedSince = async (mark: string) =>
  (await gw.redis.xrange(queue.keys.events, `(${mark}`, '+')).filter(([, f]) => f[1] === 'added').map(([, f]) => f[f.indexOf('jobId') + 1]);
const submissionsOf = async (link: Link) => (await team.api.get(`/api/smart-links/${link.id}/submissions?per_page=200`)).body.data;

describe('formats', () => {
  it('form-urlencoded, with the link defaults (duration, the calendar zone)', async () => {
    const { link } = await newLink(gw, team, { default_duration: 45 });
    const res = await submitForm(link.url, { title: 'Form', start: '2030-03-10 14:00' });
    expect(res.status).toBe(202);
    const evt = (await team.api.get(`/api/events/${(await outcomeOf(team, res.body.data.id)).event_public_id}`)).body.data;
    expect(evt).toMatchObject({ title: 'Form', date_start: '2030-03-10T14:00:00-04:00', date_end: '2030-03-10T14:45:00-04:00', timezone: 'America/New_York', calendar_uid: link.calendar_uid });
  });

  it('multipart without files, with aliases and an explicit zone and end', async () => {
    const { link } = await newLink(gw, team);
    const body = new FormData();
    body.set('title', 'Multipart');
    body.set('date_start', '2030-06-01T09:00:00');
    body.set('date_end', '2030-06-01T11:30:00');
    body.set('timezone', 'Europe/Paris');
    body.set('internal_name', 'mp-1');
    const res = await fetch(link.url, { method: 'POST', body });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    const evt = (await team.api.get(`/api/events/${(await outcomeOf(team, id)).event_public_id}`)).body.data;
    expect(evt).toMatchObject({ title: 'Multipart', date_start: '2030-06-01T09:00:00+02:00', date_end: '2030-06-01T11:30:00+02:00', timezone: 'Europe/Paris', internal_name: 'mp-1' });
  });

  it('JSON, all-day, duration winning over end', async () => {
    const { link } = await newLink(gw, team);
    const json = async (payload: unknown) => {
      const res = await fetch(link.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload) });
      return { status: res.status, body: (await res.json()) as { data: { id: string } } };
    };
    const allDay = await json({ title: 'Conference', start: '2030-09-14', end: '2030-09-16', is_all_day: true });
    const timed = await json({ title: 'Timed', start: '2030-09-14T10:00:00Z', end: '2030-09-14T18:00:00Z', duration: 15 });
    expect([allDay.status, timed.status]).toEqual([202, 202]);
    const a = (await team.api.get(`/api/events/${(await outcomeOf(team, allDay.body.data.id)).event_public_id}`)).body.data;
    expect(a).toMatchObject({ is_all_day: true, date_start: '2030-09-14T00:00:00+00:00', date_end: '2030-09-16T00:00:00+00:00', date_range_formatted: 'Sat Sep 14, 2030 - Mon Sep 16, 2030 (all day)' });
    const t = (await team.api.get(`/api/events/${(await outcomeOf(team, timed.body.data.id)).event_public_id}`)).body.data;
    expect(t).toMatchObject({ date_start: '2030-09-14T06:00:00-04:00', date_end: '2030-09-14T06:15:00-04:00' });
  });

  it('all-day: duration counts in whole days (at least one) and wins over end', async () => {
    const { link } = await newLink(gw, team, { default_duration: 4320 });
    const days = async (fields: Record<string, string>) => {
      const res = await submitForm(link.url, { title: `All day ${JSON.stringify(fields)}`, is_all_day: '1', ...fields });
      expect(res.status).toBe(202);
      const evt = (await team.api.get(`/api/events/${(await outcomeOf(team, res.body.data.id)).event_public_id}`)).body.data;
      expect(evt.is_all_day).toBe(true);
      return [evt.date_start.slice(0, 10), evt.date_end.slice(0, 10)];
    };
    expect(await days({ start: '2027-06-03', duration: '2880' })).toEqual(['2027-06-03', '2027-06-04']);
    expect(await days({ start: '2027-06-03', duration: '1441' })).toEqual(['2027-06-03', '2027-06-04']);
    expect(await days({ start: '2027-06-03', duration: '1440' })).toEqual(['2027-06-03', '2027-06-03']);
    expect(await days({ start: '2027-06-03', duration: '30' })).toEqual(['2027-06-03', '2027-06-03']);
    expect(await days({ start: '2027-06-03', duration: '0' })).toEqual(['2027-06-03', '2027-06-03']);
    expect(await days({ start: '2027-06-03', end: '2027-06-10', duration: '2880' })).toEqual(['2027-06-03', '2027-06-04']);
    // A start with a time: its day in the zone, then whole days from there.
    expect(await days({ start: '2027-06-03T23:30:00', timezone: 'Asia/Tokyo', duration: '4320' })).toEqual(['2027-06-03', '2027-06-05']);
    // Neither end nor duration: the start day alone (the link's default_duration is for timed events).
    expect(await days({ start: '2027-06-03' })).toEqual(['2027-06-03', '2027-06-03']);
    const late = await submitForm(link.url, { title: 'x', is_all_day: '1', start: '9999-12-31', duration: '2880' });
    expect([late.status, late.body.errors]).toEqual([422, { start: ["The start field must leave room for the event's duration before the year 10000."] }]);
  });

  it('takes descriptions as long as the API does (50000 characters)', async () => {
    const { link } = await newLink(gw, team);
    const long = 'Agenda '.repeat(4000); // 28000 characters, more than the 10000 once allowed here
    const res = await submitForm(link.url, { title: 'Long description', start: '2030-03-11 09:00', description: long });
    expect(res.status).toBe(202);
    const evt = (await team.api.get(`/api/events/${(await outcomeOf(team, res.body.data.id)).event_public_id}`)).body.data;
    expect(evt.description).toBe(`<p>${long.trim()}</p>`);
    const over = await submitForm(link.url, { title: 'Too long', start: '2030-03-11 09:00', description: 'x'.repeat(50001) });
    expect([over.status, over.body.errors]).toEqual([422, { description: ['The description field must not be greater than 50000 characters.'] }]);
  });

  it('stores the zone sent in any case in its IANA spelling', async () => {
    const { link } = await newLink(gw, team);
    const res = await submitForm(link.url, { title: 'Zoned', start: '2030-06-01 09:00', timezone: 'europe/paris' });
    expect(res.status).toBe(202);
    const evt = (await team.api.get(`/api/events/${(await outcomeOf(team, res.body.data.id)).event_public_id}`)).body.data;
    expect(evt).toMatchObject({ timezone: 'Europe/Paris', date_start: '2030-06-01T09:00:00+02:00' });
  });

  it('counts a title in characters: 255 emoji are accepted and become the event, 256 are refused', async () => {
    const { link } = await newLink(gw, team);
    const title = '🎉'.repeat(255);
    const res = await submitForm(link.url, { title, start: '2030-06-01 09:00', location: '📍'.repeat(255), internal_name: 'é'.repeat(255) });
    expect(res.status).toBe(202);
    const outcome = await outcomeOf(team, res.body.data.id);
    expect(outcome.status).toBe('processed');
    expect((await team.api.get(`/api/events/${outcome.event_public_id}`)).body.data).toMatchObject({ title, location: '📍'.repeat(255) });
    const over = await submitForm(link.url, { title: `${title}🎉`, start: '2030-06-01 09:00' });
    expect([over.status, over.body.errors]).toEqual([422, { title: ['The title field must not be greater than 255 characters.'] }]);
  });

  it('escapes hostile content on every public surface', async () => {
    const { link } = await newLink(gw, team);
    const res = await submitForm(link.url, { ...form, title: '<script>alert(1)</script>', description: '<img src=x onerror=alert(1)>hi' });
    const evt = (await team.api.get(`/api/events/${(await outcomeOf(team, res.body.data.id)).event_public_id}`)).body.data;
    expect(evt.description).toBe('hi');
    const page = await fetch(evt.public_url).then((r) => r.text());
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});

describe('from a web page (CORS)', () => {
  it('answers the preflight and lets any page read every answer', async () => {
    const { link } = await newLink(gw, team);
    const preflight = await fetch(link.url, {
      method: 'OPTIONS',
      headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,idempotency-key' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase().split(', ')).toEqual(expect.arrayContaining(['content-type', 'idempotency-key']));
    const mark = await queueMark();
    const accepted = await submitForm(link.url, form, { Origin: 'https://shop.example' });
    expect([accepted.status, accepted.headers.get('access-control-allow-origin')]).toEqual([202, '*']);
    expect(accepted.headers.get('access-control-expose-headers')).toContain('Retry-After');
    const refused = await submitForm(link.url, { start: 'soon' }, { Origin: 'https://shop.example' });
    expect([refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([422, '*']);
    // The preflight queued nothing; the one submission did, in the job its id names.
    // (Named from the id, not read back from the queued index: the worker may be done already.)
    expect(await addedSince(mark)).toEqual([groupJobId(accepted.body.data.id.slice(4))]);
  });
});

describe('refusals queue nothing', () => {
  let link: Link;
  beforeAll(async () => {
    link = (await newLink(gw, team)).link;
  });

  it('422 lists every bad field', async () => {
    const before = await queueMark();
    const res = await submitForm(link.url, { start: 'next week', end: '2030-01-01', timezone: 'Nowhere/City', duration: '-5', is_all_day: 'perhaps' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      title: ['The title field is required.'],
      start: ['The start field must be a date: YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss], or ISO 8601 such as 2026-07-14T13:00:00+02:00.'],
      duration: ['The duration field must be at least 0.'],
      timezone: ['The timezone field must be an IANA time zone name, such as Europe/Berlin, America/New_York or UTC.'],
      is_all_day: ['The is all day field must be true or false.'],
    });
    expect(res.body.message).toBe('The title field is required. (and 4 more errors)');
    const order = await submitForm(link.url, { title: 'x', start: '2030-01-02 10:00', end: '2030-01-01 10:00' });
    expect(order.status).toBe(422);
    expect(order.body.errors).toEqual({ end: ['The end field must be a date after or equal to start.'] });
    // No end sent: the link's default duration running past the year 9999 is the start's problem.
    const late = await submitForm(link.url, { title: 'x', start: '9999-12-31 23:59', timezone: 'UTC' });
    expect([late.status, late.body.errors]).toEqual([422, { start: ["The start field must leave room for the event's duration before the year 10000."] }]);
    expect(await addedSince(before)).toEqual([]);
  });

  it('a title of only white space is a missing title (422, nothing queued)', async () => {
    const before = await queueMark();
    const missing = await submitForm(link.url, { start: '2030-01-02 10:00' });
    const spaces = await submitForm(link.url, { title: '   ', start: '2030-01-02 10:00' });
    expect([spaces.status, spaces.body]).toEqual([422, missing.body]);
    expect(spaces.body).toEqual({ message: 'The title field is required.', errors: { title: ['The title field is required.'] } });
    const json = await fetch(link.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ title: ' \t\n\u00a0', start: '2030-01-02 10:00' }) });
    expect([json.status, await json.json()]).toEqual([422, missing.body]);
    expect(await addedSince(before)).toEqual([]);
  });

  it('404 for an unknown, inactive or deleted link', async () => {
    const before = await queueMark();
    expect((await submitForm(`${gw.baseUrl}/s/NoSuchKeyNoSuchKeyNoSuch`, form)).status).toBe(404);
    const inactive = (await newLink(gw, team, { is_active: false })).link;
    expect((await submitForm(inactive.url, form)).status).toBe(404);
    const deleted = (await newLink(gw, team)).link;
    expect((await submitForm(deleted.url, form)).status).toBe(202);
    await team.api.delete(`/api/smart-links/${deleted.id}`);
    const after = await submitForm(deleted.url, form);
    expect(after.status).toBe(404);
    expect(after.body).toEqual({ message: 'Smart link not found.' });
    expect(await addedSince(before)).toHaveLength(1);
  });

  it('413 for a body over 64 KiB, 415 for files and other content types, 400 for bad JSON', async () => {
    const before = await queueMark();
    expect((await submitForm(link.url, { ...form, description: 'x'.repeat(70_000) })).status).toBe(413);
    const withFile = new FormData();
    withFile.set('title', 'x');
    withFile.set('start', '2030-01-01');
    withFile.set('attachment', new Blob(['hello']), 'hello.txt');
    const file = await fetch(link.url, { method: 'POST', body: withFile });
    expect(file.status).toBe(415);
    const text = await fetch(link.url, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'title=x' });
    expect(text.status).toBe(415);
    const bad = await fetch(link.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"title":' });
    expect(bad.status).toBe(400);
    // Valid JSON that is not an object: the API's 422, with the field errors.
    for (const body of ['"str"', 'null', '5', '[]']) {
      const res = await fetch(link.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      expect([body, res.status, await res.json()]).toEqual([body, 422, { message: 'The request body must be a JSON object.', errors: { body: ['The request body must be a JSON object.'] } }]);
    }
    const notUtf8 = Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","start":"2030-01-01 10:00"}')]);
    const latin = await fetch(link.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: notUtf8 });
    expect([latin.status, await latin.json()]).toEqual([400, { message: 'The request body is not valid UTF-8.' }]);
    expect(await addedSince(before)).toEqual([]);
  });

  it('a title of spaces is missing', async () => {
    const res = await submitForm(link.url, { ...form, title: '   ' });
    expect([res.status, res.body.errors]).toEqual([422, { title: ['The title field is required.'] }]);
  });
});

describe('signed links (Standard Webhooks)', () => {
  const post = (link: Link, body: string, headers: Record<string, string>) =>
    fetch(link.url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

  function signed(secret: string, body: string, at = Date.now(), id = `msg_${Math.random().toString(36).slice(2)}`) {
    const ts = Math.floor(at / 1000);
    return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signPayload(secret, id, ts, body) };
  }

  it('accepts a valid signature and refuses missing, wrong and stale ones', async () => {
    const { link } = await newLink(gw, team, { signed: true });
    expect(link.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const body = JSON.stringify({ title: 'Signed', start: '2030-05-05 10:00' });
    expect((await post(link, body, signed(link.signing_secret, body))).status).toBe(202);

    const before = await queueMark();
    const refused = [
      await post(link, body, {}),
      await post(link, body, signed('whsec_' + Buffer.from('not the secret at all!!!').toString('base64'), body)),
      await post(link, body, signed(link.signing_secret, body, Date.now() - 6 * 60_000)),
      await post(link, body, signed(link.signing_secret, body, Date.now() + 6 * 60_000)),
      await post(link, `${body} `, signed(link.signing_secret, body)), // body changed after signing
    ];
    for (const res of refused) {
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ message: 'Invalid signature.' });
    }
    expect(await addedSince(before)).toEqual([]);
  });

  it('after a rotation both secrets verify for 24 hours, then only the new one', async () => {
    const { link } = await newLink(gw, team, { signed: true });
    const rotated = await team.api.post(`/api/smart-links/${link.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.signing_secret as string;
    expect(fresh).not.toBe(link.signing_secret);
    expect(rotated.body.data.previous_secret_expires_at).toMatch(/Z$/);
    const body = JSON.stringify({ title: 'Rotated', start: '2030-05-05 10:00' });
    expect((await post(link, body, signed(fresh, body))).status).toBe(202);
    expect((await post(link, body, signed(link.signing_secret, body))).status).toBe(202);
    gw.clock.set(new Date(Date.now() + 25 * 3600 * 1000));
    try {
      const later = Date.now() + 25 * 3600 * 1000;
      expect((await post(link, body, signed(link.signing_secret, body, later))).status).toBe(401);
      expect((await post(link, body, signed(fresh, body, later))).status).toBe(202);
    } finally {
      gw.clock.reset();
    }
  });
});

describe('signed links and the rate limit', () => {
  const post = (url: string, body: string, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
  function signed(secret: string, body: string) {
    const id = `msg_${Math.random().toString(36).slice(2)}`;
    const ts = Math.floor(Date.now() / 1000);
    return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signPayload(secret, id, ts, body) };
  }

  it("unsigned requests do not use up a signed link's limit; past the per-address limit they get 429", async () => {
    // A prefix of its own: the bad-signature count is per address, and every test posts from 127.0.0.1.
    const strict = await startGateway({ SMART_LINK_BAD_SIGNATURES_PER_MINUTE: '4', QUEUE_PREFIX: isolatedPrefix('sl_badsig') });
    try {
      const own = await strict.newTeam({ limits: { smart_link_per_minute: 2 } });
      const { link } = await newLink(strict, own, { signed: true });
      const body = JSON.stringify({ title: 'Signed after a flood', start: '2030-05-05 10:00' });
      const refused = [];
      for (let i = 0; i < 6; i++) refused.push(await post(link.url, body, i % 2 ? signed('whsec_' + Buffer.from('not the secret at all!!!').toString('base64'), body) : {}));
      expect(refused.map((r) => r.status)).toEqual([401, 401, 401, 401, 429, 429]);
      expect(await refused[0].json()).toEqual({ message: 'Invalid signature.' });
      expect([refused[0].headers.get('x-ratelimit-limit'), refused[0].headers.get('x-ratelimit-remaining')]).toEqual(['4', '3']);
      expect(await refused[4].json()).toEqual({ message: 'Too Many Attempts.' });
      expect(refused[4].headers.get('x-ratelimit-limit')).toBe('4');
      expect(Number(refused[4].headers.get('retry-after'))).toBeGreaterThan(0);

      // The sender's own signed requests still have the link's whole budget (2), from the
      // same address that was cut off for bad signatures.
      const first = await post(link.url, body, signed(link.signing_secret, body));
      expect(first.status).toBe(202);
      expect([first.headers.get('x-ratelimit-limit'), first.headers.get('x-ratelimit-remaining')]).toEqual(['2', '1']);
      expect((await post(link.url, body, signed(link.signing_secret, body))).status).toBe(202);
      // and the link's limit still holds for them
      expect((await post(link.url, body, signed(link.signing_secret, body))).status).toBe(429);
    } finally {
      await strict.close();
    }
  });

  it('a burst of unsigned requests past the link limit leaves a correctly signed one accepted', async () => {
    const own = await gw.newTeam({ limits: { smart_link_per_minute: 3 } });
    const { link } = await newLink(gw, own, { signed: true });
    const body = JSON.stringify({ title: 'Signed', start: '2030-05-06 10:00' });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(link.url, body)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const ok = await post(link.url, body, signed(link.signing_secret, body));
    expect(ok.status).toBe(202);
    expect(ok.headers.get('x-ratelimit-remaining')).toBe('2');
    // Unsigned links count every request, as before.
    const open = (await newLink(gw, own)).link;
    const plain = [];
    for (let i = 0; i < 4; i++) plain.push((await submitForm(open.url, { title: '' })).status);
    expect(plain).toEqual([422, 422, 422, 429]);
  });
});

describe('charsets', () => {
  const latin1 = (text: string) => Buffer.from(text, 'latin1');
  async function postRaw(url: string, contentType: string, body: Buffer, headers: Record<string, string> = {}) {
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': contentType, ...headers }, body });
    return { status: res.status, body: (await res.json()) as { data: { id: string }; message?: string } };
  }
  const eventOf = async (submission: string) => (await team.api.get(`/api/events/${(await outcomeOf(team, submission)).event_public_id}`)).body.data;

  it('reads a form in the charset it declares: percent-encoded bytes and bare bytes alike', async () => {
    const { link } = await newLink(gw, team);
    // \xFC is a bare ü byte, not percent-encoded.
    const body = latin1('title=Caf%E9&start=2030-04-01+10%3A00&location=Z\xFCrich');
    const res = await postRaw(link.url, 'application/x-www-form-urlencoded; charset=iso-8859-1', body);
    expect(res.status).toBe(202);
    expect(await eventOf(res.body.data.id)).toMatchObject({ title: 'Café', location: 'Zürich', date_start: '2030-04-01T10:00:00-04:00' });

    // Where windows-1252 differs from ISO-8859-1: € and curly quotes.
    const cp1252 = await postRaw(link.url, 'application/x-www-form-urlencoded; charset=windows-1252', latin1('title=%80+%93quoted%94&start=2030-04-01'));
    expect((await eventOf(cp1252.body.data.id)).title).toBe('€ “quoted”');

    const sjis = await postRaw(link.url, 'application/x-www-form-urlencoded;charset="Shift_JIS"', latin1('title=%89%EF%8Bc&start=2030-04-02'));
    expect(sjis.status).toBe(202);
    expect((await eventOf(sjis.body.data.id)).title).toBe('会議');

    const utf8 = await postRaw(link.url, 'application/x-www-form-urlencoded; charset=UTF-8', latin1('title=Caf%C3%A9+utf8&start=2030-04-03'));
    expect((await eventOf(utf8.body.data.id)).title).toBe('Café utf8');
  });

  it('answers 415 for a charset it does not know, queueing nothing', async () => {
    const { link } = await newLink(gw, team);
    const before = await queueMark();
    const res = await postRaw(link.url, 'application/x-www-form-urlencoded; charset=klingon', latin1('title=Caf%E9&start=2030-04-01'));
    expect([res.status, res.body.message]).toEqual([415, 'Unsupported charset "klingon": send UTF-8, or name a charset such as ISO-8859-1, windows-1252 or Shift_JIS.']);
    const multipart = await postRaw(link.url, 'multipart/form-data; boundary=XyZ; charset=klingon', latin1('--XyZ--\r\n'));
    expect(multipart.status).toBe(415);
    expect(await addedSince(before)).toEqual([]);
  });

  it('verifies a signature over the bytes as sent, before any decoding', async () => {
    const { link } = await newLink(gw, team, { signed: true });
    const body = latin1('title=Sign%E9\xE9&start=2030-04-04');
    const id = `msg_${Math.random().toString(36).slice(2)}`;
    const ts = Math.floor(Date.now() / 1000);
    const headers = (signedBody: Buffer) => ({ 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signPayload(link.signing_secret, id, ts, signedBody) });
    const type = 'application/x-www-form-urlencoded; charset=iso-8859-1';
    // Signed over the text re-encoded as UTF-8: not the bytes sent.
    expect((await postRaw(link.url, type, body, headers(Buffer.from(body.toString('latin1'), 'utf8')))).status).toBe(401);
    const res = await postRaw(link.url, type, body, headers(body));
    expect(res.status).toBe(202);
    expect((await eventOf(res.body.data.id)).title).toBe('Signéé');
  });

  it('reads multipart parts in their own charset, else the one the request declares', async () => {
    const { link } = await newLink(gw, team);
    const part = (name: string, value: Buffer, type?: string) =>
      Buffer.concat([latin1(`--XyZ\r\nContent-Disposition: form-data; name="${name}"\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n`), value, latin1('\r\n')]);
    const own = Buffer.concat([
      part('title', latin1('Caf\xE9'), 'text/plain; charset=iso-8859-1'),
      part('location', Buffer.from('Zürich', 'utf8')),
      part('start', latin1('2030-04-05')),
      latin1('--XyZ--\r\n'),
    ]);
    const res = await postRaw(link.url, 'multipart/form-data; boundary=XyZ', own);
    expect(res.status).toBe(202);
    expect(await eventOf(res.body.data.id)).toMatchObject({ title: 'Café', location: 'Zürich' });

    const declared = Buffer.concat([part('title', latin1('D\xE9clar\xE9')), part('start', latin1('2030-04-06')), latin1('--XyZ--\r\n')]);
    const byRequest = await postRaw(link.url, 'multipart/form-data; boundary=XyZ; charset=iso-8859-1', declared);
    expect((await eventOf(byRequest.body.data.id)).title).toBe('Déclaré');

    const unknown = Buffer.concat([part('title', latin1('x'), 'text/plain; charset=klingon'), part('start', latin1('2030-04-06')), latin1('--XyZ--\r\n')]);
    expect((await postRaw(link.url, 'multipart/form-data; boundary=XyZ', unknown)).status).toBe(415);
  });
});

describe('deduplication', () => {
  it('a repeated webhook-id answers the first id, queues nothing and makes one event', async () => {
    const { link } = await newLink(gw, team);
    const headers = { 'webhook-id': 'msg_repeat_1' };
    const first = await submitForm(link.url, form, headers);
    const before = await queueMark();
    const again = await submitForm(link.url, { ...form, title: 'Changed but repeated' }, headers);
    expect(again.status).toBe(202);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(await addedSince(before)).toEqual([]);
    const outcome = await outcomeOf(team, first.body.data.id);
    expect(outcome.status).toBe('processed');
    expect(await submissionsOf(link)).toHaveLength(1);
  });

  it('Idempotency-Key does the same', async () => {
    const { link } = await newLink(gw, team);
    const a = await submitForm(link.url, form, { 'Idempotency-Key': 'order-1234' });
    const b = await submitForm(link.url, form, { 'Idempotency-Key': 'order-1234' });
    expect(b.body.data.id).toBe(a.body.data.id);
    await outcomeOf(team, a.body.data.id);
    expect(await submissionsOf(link)).toHaveLength(1);
  });

  it('identical content resolves to the same event', async () => {
    const { link } = await newLink(gw, team);
    const a = await submitForm(link.url, form);
    const b = await submitForm(link.url, { ...form, email: 'someone-else@example.com' }); // unknown fields do not count
    const c = await submitForm(link.url, { ...form, title: 'Another call' });
    const [oa, ob, oc] = [await outcomeOf(team, a.body.data.id), await outcomeOf(team, b.body.data.id), await outcomeOf(team, c.body.data.id)];
    expect(oa.event_public_id).toBe(ob.event_public_id);
    expect([oa.status, ob.status].sort()).toEqual(['duplicate', 'processed']);
    expect(oc.event_public_id).not.toBe(oa.event_public_id);
    const count = await gw.db('events').where({ team_id: team.teamId, title: 'Intro call', date_start: '2030-03-10T18:00:00Z' }).whereIn('uid', [oa.event_public_id.slice(4)]).count<{ count: number }[]>('* as count');
    expect(count[0].count).toBe(1);
  });

  it('a resend of content whose event was deleted does not bring the event back', async () => {
    const { link } = await newLink(gw, team);
    const first = await outcomeOf(team, (await submitForm(link.url, { ...form, title: 'Deleted later' })).body.data.id);
    expect((await team.api.delete(`/api/events/${first.event_public_id}`)).status).toBe(200);
    const again = await outcomeOf(team, (await submitForm(link.url, { ...form, title: 'Deleted later' })).body.data.id);
    expect(again).toMatchObject({ status: 'duplicate', event_public_id: first.event_public_id });
    expect((await team.api.get(`/api/events/${first.event_public_id}`)).status).toBe(404);
  });

  it('the same content sent to another link is another event', async () => {
    const one = (await newLink(gw, team)).link;
    const two = (await newLink(gw, team)).link;
    const a = await outcomeOf(team, (await submitForm(one.url, form)).body.data.id);
    const b = await outcomeOf(team, (await submitForm(two.url, form)).body.data.id);
    expect(a.event_public_id).not.toBe(b.event_public_id);
  });
});

describe('approval', () => {
  it('events of a link that requires approval start pending, off every public page, until approved', async () => {
    const { link } = await newLink(gw, team, { requires_approval: true });
    const outcome = await outcomeOf(team, (await submitForm(link.url, form)).body.data.id);
    const evt = (await team.api.get(`/api/events/${outcome.event_public_id}`)).body.data;
    expect(evt.status).toBe('pending');
    expect((await fetch(evt.public_url)).status).toBe(404);
    expect((await team.api.get('/api/events?status=pending&per_page=200')).body.data.map((e: { public_id: string }) => e.public_id)).toContain(evt.public_id);

    const approved = await team.api.post(`/api/events/${evt.public_id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.data.status).toBe('approved');
    expect((await fetch(evt.public_url)).status).toBe(200);
    expect(await fetch(`${evt.calendar.public_url}.ics`).then((r) => r.text())).toContain(`evt_${evt.uid}@`);

    const rejected = await team.api.post(`/api/events/${evt.public_id}/reject`);
    expect(rejected.body.data.status).toBe('rejected');
    expect((await fetch(evt.public_url)).status).toBe(404);
    expect(await fetch(`${evt.calendar.public_url}.ics`).then((r) => r.text())).not.toContain(`evt_${evt.uid}@`);
    const other = await gw.newTeam();
    expect((await other.api.post(`/api/events/${evt.public_id}/approve`)).status).toBe(404);
  });
});

describe('the plan limit', () => {
  it('submissions past the monthly limit fail with event_limit_exceeded and are not retried', async () => {
    const limited = await gw.newTeam({ eventLimit: 3 });
    const { link } = await newLink(gw, limited);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await submitForm(link.url, { ...form, title: `Call ${i}` })).body.data.id);
    const outcomes = [];
    for (const id of ids) outcomes.push(await outcomeOf(limited, id));
    expect(outcomes.map((o) => o.status)).toEqual(['processed', 'processed', 'processed', 'failed', 'failed']);
    expect(outcomes[4]).toMatchObject({ error: 'event_limit_exceeded', event_public_id: null });
    // Done with, not retried: its job finished (and, a group's, was removed) instead of waiting to run again.
    await waitFor(async () => (await queuedEntry(gw.redis, gw.config.queuePrefix, ids[4].slice(4))) === null || undefined, { what: 'the job to finish' });
    const count = await gw.db('events').where({ team_id: limited.teamId }).count<{ count: number }[]>('* as count');
    expect(count[0].count).toBe(3);
    // the API refuses too
    expect((await limited.api.post('/api/events', { title: 'x', start: '2030-01-01 10:00' })).status).toBe(409);
  });
});

describe('rate limit per link', () => {
  it('answers 429 with the headers once a link sends too much, other links unaffected', async () => {
    const limitedGw = await startGateway({ QUEUE_PREFIX: prefix });
    try {
      const own = await limitedGw.newTeam({ limits: { smart_link_per_minute: 3 } });
      const { link } = await newLink(limitedGw, own);
      const other = (await newLink(limitedGw, own)).link;
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const res = await submitForm(link.url, { ...form, title: `R${i}` });
        statuses.push(res.status);
        if (i < 3) expect(res.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
        else {
          expect(res.body).toEqual({ message: 'Too Many Attempts.' });
          expect(res.headers.get('x-ratelimit-limit')).toBe('3');
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        }
      }
      expect(statuses).toEqual([202, 202, 202, 429]);
      expect((await submitForm(other.url, form)).status).toBe(202);
    } finally {
      await limitedGw.close();
    }
  });
});

describe('platform redirect', () => {
  it('/s/{key}/google answers 303 to the new event on Google once it exists', async () => {
    const { link } = await newLink(gw, team);
    const res = await submitForm(`${link.url}/google`, { ...form, title: 'Straight to Google' });
    expect(res.status).toBe(303);
    const location = res.headers.get('location') as string;
    expect(location).toMatch(new RegExp(`^${gw.baseUrl}/e/[0-9A-Za-z]{16}/google$`));
    const google = await fetch(location, { redirect: 'manual' });
    expect(google.status).toBe(302);
    expect(new URL(google.headers.get('location') as string).searchParams.get('text')).toBe('Straight to Google');
    expect((await submitForm(`${link.url}/fax`, form)).status).toBe(404);
  });
});

describe('submission records', () => {
  it('lists submissions newest first, by status, page by page', async () => {
    const { link } = await newLink(gw, team);
    const ids = [];
    // A second apart, as received (the worker may record them in another order).
    const start = Date.now();
    try {
      for (let i = 0; i < 5; i++) {
        gw.clock.set(new Date(start + i * 1000));
        ids.push((await submitForm(link.url, { ...form, title: i === 4 ? 'Intro call' : `S${i}` })).body.data.id);
      }
      gw.clock.set(new Date(start + 5000));
      ids.push((await submitForm(link.url, { ...form, title: 'S0' })).body.data.id); // identical to the first: duplicate
    } finally {
      gw.clock.reset();
    }
    for (const id of ids) await outcomeOf(team, id);
    const page1 = await team.api.get(`/api/smart-links/${link.id}/submissions?per_page=4`);
    expect(page1.body.data.map((s: { id: string }) => s.id)).toEqual([...ids].reverse().slice(0, 4));
    const page2 = await team.api.get(`/api/smart-links/${link.id}/submissions?per_page=4&cursor=${page1.body.meta.next_cursor}`);
    expect(page2.body.data.map((s: { id: string }) => s.id)).toEqual([...ids].reverse().slice(4));
    expect(page2.body.meta.next_cursor).toBeNull();
    const bad = await team.api.get(`/api/smart-links/${link.id}/submissions?cursor=${Buffer.from('["not a time",1]').toString('base64url')}`);
    expect([bad.status, bad.body.errors]).toEqual([422, { cursor: ['The cursor field is invalid.'] }]);
    const dups = await team.api.get(`/api/smart-links/${link.id}/submissions?status=duplicate`);
    expect(dups.body.data.map((s: { id: string }) => s.id)).toEqual([ids[5]]);
    const other = await gw.newTeam();
    expect((await other.api.get(`/api/smart-link-submissions/${ids[0]}`)).status).toBe(404);
    expect((await other.api.get(`/api/smart-links/${link.id}/submissions`)).status).toBe(404);
  });
  it('a job the worker gave up on reads failed, not queued', async () => {
    // Accepted (indexed as the gateway indexes a stored job), then its job fails for good: a
    // payload that breaks the job contract (a day that does not exist) fails at once.
    const prefix = 'BrokenGrp' + String(Date.now()).slice(-1);
    const members = ['a', 'b'].map((c) => `${prefix}${c.repeat(6)}`);
    const entry = (submission: string) => ({ submission, receivedAt: '2030-02-30T10:00:00.000Z', event: {} });
    await queue.add('submissions', { link: { id: 1, teamId: team.teamId, calendarId: 1 }, submissions: members.map(entry) }, { jobId: groupJobId(prefix) });
    const receivedAtMs = Date.parse('2030-02-01T10:00:00.000Z');
    await indexQueued(gw.redis, gw.config.queuePrefix, [{ jobId: groupJobId(prefix), teamId: team.teamId, linkId: 1, submissions: members.map((uid) => ({ uid, receivedAtMs })) }]);
    await waitFor(async () => (await queue.getJob(groupJobId(prefix)))?.failedReason, { what: 'the group job failed' });
    for (const member of members) {
      const read = await team.api.get(`/api/smart-link-submissions/sls_${member}`);
      expect(read.body.data).toMatchObject({ id: `sls_${member}`, status: 'failed', error: 'not_processed', received_at: '2030-02-01T10:00:00.000000Z' });
      expect((await (await gw.newTeam()).api.get(`/api/smart-link-submissions/sls_${member}`)).status).toBe(404);
    }
  });
});
