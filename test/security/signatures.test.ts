import { Queue } from 'bullmq';
import { signPayload } from '../../shared/webhooks/signature';
import { newSigningSecret } from '../../shared/webhooks/secrets';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { emailedAnswerKey } from '../helpers/answer-keys';
import type { TestGateway, TestTeam } from '../helpers/gateway';
import { BROWSER_UA, dropPrefix, securityPrefix, seedTeam, startSecurityGateway } from './fixtures';

/**
 * Secrets that arrive in requests: signed URLs, unlock cookies, access codes, personal feed
 * tokens and smart-link webhook signatures. Each is compared in constant time (HMACs and
 * hashes of equal length through crypto.timingSafeEqual, tokens looked up by their SHA-256),
 * which no test can measure; these tests hold the behaviour: a secret that is nearly right
 * (one character changed, cut short, one character more, another case, another event's) is
 * refused exactly like one that is all wrong.
 */

const NAME = 'signatures';
let gw: TestGateway;
let team: TestTeam;
let cal: { public_id: string; uid: string };
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
let submissions: Queue;

beforeAll(async () => {
  gw = await startSecurityGateway(NAME);
  team = await gw.newTeam({ plan: 'unlimited' });
  cal = (await team.api.post('/api/calendars', { name: 'Private', timezone: 'UTC' })).body.data;
  submissions = new Queue(smartLinkJob.queue, { connection: queueRedis, prefix: securityPrefix(NAME) });
});
afterEach(() => gw.clock.reset());
afterAll(async () => {
  await submissions?.close();
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await closeRedis(queueRedis);
  await gw?.close();
});

/** Every way to get a secret nearly right. */
function nearMisses(secret: string): Array<[string, string]> {
  const flip = (c: string) => (c === 'A' ? 'B' : 'A');
  return [
    ['last character changed', secret.slice(0, -1) + flip(secret.slice(-1))],
    ['first character changed', flip(secret[0]) + secret.slice(1)],
    ['one character short', secret.slice(0, -1)],
    ['half of it', secret.slice(0, Math.ceil(secret.length / 2))],
    ['one character more', `${secret}A`],
    ['another case', secret.replace(/[a-z]/gi, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()))],
    ['empty', ''],
  ];
}

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { redirect: 'manual', headers: { 'User-Agent': BROWSER_UA, ...headers } });

async function protectedEvent(code = 'open-sesame') {
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, {
    title: 'Board dinner',
    date_start: '2031-05-01 19:00',
    date_end: '2031-05-01 22:00',
    timezone: 'UTC',
    access_code: code,
  });
  expect(res.status).toBe(200);
  return res.body.data as { uid: string; public_id: string; public_url: string };
}

async function signedUrl(evt: { public_id: string }, days = 2): Promise<URL> {
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/signed-url`, { expiry_days: days });
  expect(res.status).toBe(200);
  return new URL(res.body.url);
}

describe('signed URLs', () => {
  it('a changed, swapped, truncated, recased or expired pair is a 403 on the page and every platform link', async () => {
    gw.clock.set('2031-01-01T00:00:00Z');
    const [one, two] = [await protectedEvent(), await protectedEvent('another-code')];
    const url = await signedUrl(one);
    const expires = url.searchParams.get('expires') as string;
    const signature = url.searchParams.get('signature') as string;
    const twoSignature = (await signedUrl(two)).searchParams.get('signature') as string;
    const paths = ['', '/google', '/ics', '/embed', '/auto'];
    // (auto sends this browser on to Google)
    for (const path of paths) expect([path, (await get(`${one.public_url}${path}${url.search}`)).status]).toEqual([path, ['/google', '/auto'].includes(path) ? 302 : 200]);

    const q = (e: string, s: string) => `?expires=${encodeURIComponent(e)}&signature=${encodeURIComponent(s)}`;
    const refused: Array<[string, string]> = [
      ...nearMisses(signature).map(([what, s]): [string, string] => [`signature ${what}`, q(expires, s)]),
      ['signature in standard base64', q(expires, signature.replace(/-/g, '+').replace(/_/g, '/') + '=')],
      ['expires one second later', q(String(Number(expires) + 1), signature)],
      ['expires one second earlier', q(String(Number(expires) - 1), signature)],
      ['expires far in the future', q('9999999999', signature)],
      ['expires not a number', q(`${expires}x`, signature)],
      ['expires with a leading zero', q(`0${expires}`, signature)],
      ['expires with a plus sign', q(`+${expires}`, signature)],
      ["another event's signature", q(expires, twoSignature)],
      ['signature given twice', `?expires=${expires}&signature=${signature}&signature=${signature}`],
      ['no signature', `?expires=${expires}`],
      ['no expires', `?signature=${signature}`],
    ];
    const wrong: string[] = [];
    for (const [what, query] of refused) {
      for (const path of paths) {
        const res = await get(`${one.public_url}${path}${query}`, { Accept: 'application/json' });
        const body = await res.text();
        if (res.status !== 403 || !JSON.parse(body).message) wrong.push(`${what} on ${path || 'the page'}: ${res.status} ${body.slice(0, 80)}`);
      }
    }
    // The pair of one event on the other
    if ((await get(`${two.public_url}${url.search}`)).status !== 403) wrong.push("one event's pair opened another");
    expect(wrong).toEqual([]);

    // Until it expires, and not a second after.
    gw.clock.set(new Date(Number(expires) * 1000 - 1000));
    expect((await get(url.href)).status).toBe(200);
    gw.clock.set(new Date(Number(expires) * 1000));
    expect((await get(url.href)).status).toBe(403);
    expect((await get(`${one.public_url}/ics${url.search}`)).status).toBe(403);
  });

  it("an unlock cookie opens only its own event, untampered and unexpired", async () => {
    gw.clock.set('2031-01-01T00:00:00Z');
    const [one, two] = [await protectedEvent(), await protectedEvent()];
    const unlocked = await fetch(`${one.public_url}/unlock`, { method: 'POST', body: new URLSearchParams({ access_code: 'open-sesame' }), redirect: 'manual' });
    expect(unlocked.status).toBe(303);
    const [name, value] = (unlocked.headers.get('set-cookie') as string).split(';')[0].split('=');
    expect((await get(one.public_url, { cookie: `${name}=${value}` })).status).toBe(200);
    const [expires, mac] = value.split('.');
    const wrong: string[] = [];
    const cookies: Array<[string, string]> = [
      ...nearMisses(mac).map(([what, m]): [string, string] => [`mac ${what}`, `${name}=${expires}.${m}`]),
      ['a later expiry', `${name}=${Number(expires) + 3600}.${mac}`],
      ["under the other event's name", `unlock_${two.uid}=${value}`],
    ];
    for (const [what, cookie] of cookies) {
      for (const url of [one.public_url, two.public_url, `${one.public_url}/ics`]) {
        const status = (await get(url, { cookie })).status;
        if (status !== 403) wrong.push(`${what} on ${url}: ${status}`);
      }
    }
    expect(wrong).toEqual([]);
    gw.clock.set(new Date(Number(expires) * 1000));
    expect((await get(one.public_url, { cookie: `${name}=${value}` })).status).toBe(403);
  });

  it('an access code that is nearly right does not unlock', async () => {
    const evt = await protectedEvent('Open-Sesame-42');
    for (const [what, code] of nearMisses('Open-Sesame-42').slice(0, 4)) {
      const res = await gw.anon.post(`/e/${evt.uid}/unlock`, { access_code: code });
      expect([what, res.status]).toEqual([what, 403]);
    }
    // The right one still does (four wrong ones are under the limit of five).
    const res = await gw.anon.post(`/e/${evt.uid}/unlock`, { access_code: 'Open-Sesame-42' });
    expect(res.status).toBe(200);
  });
});

describe('RSVP answer keys', () => {
  it('a key opens its protected event only under the code it was made with, and only while the event takes RSVPs', async () => {
    const base = { title: 'Members evening', date_start: '2030-06-01 18:00', date_end: '2030-06-01 21:00', timezone: 'UTC', has_rsvp: true };
    const e = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { ...base, access_code: 'first-code' })).body.data as { uid: string; public_id: string; public_url: string };
    const eventPath = `/api/calendars/${cal.public_id}/events/${e.public_id}`;
    /** Answers as `email`, and the answer's key as its confirmation carries it. */
    const give = async (email: string) => {
      const signed = (await team.api.post(`${eventPath}/signed-url`, {})).body.url as string;
      const res = await fetch(signed.replace('?', '/rsvp?'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ name: 'Guest', email, answer: 'yes' }),
      });
      expect(res.status).toBe(202);
      return emailedAnswerKey(gw, e.uid, email);
    };
    /** Follows the answer link; answers its status, whether it set an unlock cookie, and what the cookies open. */
    const follow = async (key: string) => {
      const res = await fetch(`${e.public_url}/rsvp?key=${key}`, { redirect: 'manual' });
      const cookies = res.headers.getSetCookie().map((c) => c.split(';')[0]);
      const cookie = cookies.join('; ');
      return {
        status: res.status,
        unlock: cookies.some((c) => c.startsWith(`unlock_${e.uid}=`)),
        page: (await fetch(e.public_url, { headers: { cookie } })).status,
        ics: (await fetch(`${e.public_url}/ics`, { headers: { cookie }, redirect: "manual" })).status,
      };
    };
    const key = await give('keeper@example.com');
    expect(key.split('.')).toHaveLength(3);
    expect(await follow(key)).toEqual({ status: 303, unlock: true, page: 200, ics: 200 });
    // Another answer's key, or this one's answer part alone, opens nothing.
    const other = await give('other@example.com');
    expect(await follow(`${key.split('.').slice(0, 2).join('.')}.${other.split('.')[2]}`)).toMatchObject({ unlock: false, page: 403 });
    expect(await follow(key.split('.').slice(0, 2).join('.'))).toMatchObject({ status: 303, unlock: false, page: 403, ics: 403 });

    // The owner changes the code: the key still changes the answer, but opens nothing.
    expect((await team.api.put(eventPath, { ...base, access_code: 'second-code' })).status).toBe(200);
    expect(await follow(key)).toEqual({ status: 303, unlock: false, page: 403, ics: 403 });
    const signed = (await team.api.post(`${eventPath}/signed-url`, {})).body.url as string;
    const changed = await fetch(signed.replace('?', '/rsvp?'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ name: 'Guest', email: 'keeper@example.com', answer: 'no', key }),
    });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as { data: { answer: string } }).data.answer).toBe('no');

    // A key made under the new code opens it, until the event stops taking RSVPs.
    const renewed = await give('new-guest@example.com');
    expect(await follow(renewed)).toMatchObject({ unlock: true, page: 200 });
    expect((await team.api.put(eventPath, { ...base, has_rsvp: false })).status).toBe(200);
    expect(await follow(renewed)).toMatchObject({ status: 303, unlock: false, page: 403 });
  });

  it("a nearly right key neither changes the answer nor opens the event", async () => {
    const e = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Keyed', date_start: '2030-06-02 18:00', date_end: '2030-06-02 19:00', timezone: 'UTC', has_rsvp: true, access_code: 'keyed-code' })).body.data as { uid: string; public_id: string; public_url: string };
    const signed = (await team.api.post(`/api/calendars/${cal.public_id}/events/${e.public_id}/signed-url`, {})).body.url as string;
    const post = (body: Record<string, string>) =>
      fetch(signed.replace('?', '/rsvp?'), { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });
    expect((await post({ name: 'Kim', email: 'kim@example.com', answer: 'yes' })).status).toBe(202);
    const key = await emailedAnswerKey(gw, e.uid, 'kim@example.com');
    for (const [how, near] of nearMisses(key)) {
      const res = await fetch(`${e.public_url}/rsvp?key=${encodeURIComponent(near)}`, { redirect: 'manual' });
      expect([how, res.status === 303 && res.headers.getSetCookie().some((c) => c.startsWith(`unlock_${e.uid}=`))]).toEqual([how, false]);
    }
    // The answer's part of the key (its uid and MAC) nearly right: the answer stands, and
    // the address is sent its link, as for no key at all.
    const [uid, mac, unlock] = key.split('.');
    for (const [how, near] of nearMisses(`${uid}.${mac}`).filter(([, k]) => k !== '')) {
      const changed = await post({ name: 'Kim', email: 'kim@example.com', answer: 'no', key: `${near}.${unlock}` });
      expect([how, changed.status]).toEqual([how, 202]);
    }
    expect((await team.api.get(`/api/calendars/${cal.public_id}/events/${e.public_id}/rsvps`)).body.data.map((r: { answer: string }) => r.answer)).toEqual(['yes']);
  });
});

describe('personal feed tokens', () => {
  it('only the exact token serves the feed; near misses are unknown feeds', async () => {
    const seeded = await seedTeam(gw, await gw.newTeam({ plan: 'unlimited' }));
    const feed = (token: string) => get(`${seeded.calendar.public_url}/feeds/${encodeURIComponent(token)}.ics`);
    expect((await feed(seeded.feedToken)).status).toBe(200);
    for (const [what, token] of nearMisses(seeded.feedToken)) {
      const res = await feed(token);
      expect([what, res.status]).toEqual([what, 404]);
    }
    // Stored by hash too, looked up by it; the token itself is what the API shows in feed_url.
    const row = await gw.db('subscribers').where({ feed_token: seeded.feedToken }).first('feed_token_hash');
    expect(row.feed_token_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('smart-link signatures (Standard Webhooks)', () => {
  async function signedLink() {
    const res = await team.api.post('/api/smart-links', { name: 'Webhook', calendar: cal.public_id, signed: true });
    expect(res.status).toBe(200);
    return res.body.data as { id: string; url: string; signing_secret: string };
  }

  const body = JSON.stringify({ title: 'Signed', start: '2031-05-05 10:00' });
  let serial = 0;

  function headers(secret: string, opts: { body?: string; at?: number; id?: string } = {}) {
    const id = opts.id ?? `msg_${Date.now().toString(36)}_${serial++}`;
    const ts = Math.floor((opts.at ?? gw.clock.now().getTime()) / 1000);
    return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signPayload(secret, id, ts, opts.body ?? body) };
  }

  const post = async (url: string, hdrs: Record<string, string>, payload = body) => {
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...hdrs }, body: payload });
    return { status: res.status, body: (await res.json()) as { message?: string; data?: { id: string } } };
  };

  it('refuses a tampered body, a wrong secret, another id, a stale or future timestamp and broken headers, and queues nothing', async () => {
    gw.clock.set('2031-01-01T12:00:00Z');
    const link = await signedLink();
    const now = gw.clock.now().getTime();
    const good = headers(link.signing_secret);
    const jobsBefore = await submissions.getJobCounts();
    const cases: Array<[string, Record<string, string>, string?]> = [
      ['body changed after signing', good, body.replace('Signed', 'Signes')],
      ['body with a byte more', good, `${body} `],
      ['a wrong secret', headers(newSigningSecret())],
      ['signed for another id', { ...headers(link.signing_secret), 'webhook-id': 'msg_other' }],
      ['signed for another timestamp', { ...good, 'webhook-timestamp': String(Number(good['webhook-timestamp']) + 1) }],
      ['a timestamp 301 s old', headers(link.signing_secret, { at: now - 301_000 })],
      ['a timestamp 301 s ahead', headers(link.signing_secret, { at: now + 301_000 })],
      ['no signature', { 'webhook-id': good['webhook-id'], 'webhook-timestamp': good['webhook-timestamp'] }],
      ['no timestamp', { 'webhook-id': good['webhook-id'], 'webhook-signature': good['webhook-signature'] }],
      ['no id', { 'webhook-timestamp': good['webhook-timestamp'], 'webhook-signature': good['webhook-signature'] }],
      ['a v2 signature', { ...good, 'webhook-signature': good['webhook-signature'].replace(/^v1,/, 'v2,') }],
      ['a bare signature', { ...good, 'webhook-signature': good['webhook-signature'].replace(/^v1,/, '') }],
      ...nearMisses(good['webhook-signature'].slice(3)).map(([what, s]): [string, Record<string, string>] => [`signature ${what}`, { ...good, 'webhook-signature': `v1,${s}` }]),
      ['a timestamp with a fraction', { ...good, 'webhook-timestamp': `${good['webhook-timestamp']}.0` }],
    ];
    const wrong: string[] = [];
    for (const [what, hdrs, payload] of cases) {
      const res = await post(link.url, hdrs, payload);
      if (res.status !== 401 || res.body.message !== 'Invalid signature.') wrong.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(wrong).toEqual([]);
    expect(await submissions.getJobCounts()).toEqual(jobsBefore);
    // Within the tolerance, and among other signatures, the right one is accepted.
    expect((await post(link.url, headers(link.signing_secret, { at: now - 299_000 }))).status).toBe(202);
    const many = headers(link.signing_secret);
    expect((await post(link.url, { ...many, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} ${many['webhook-signature']}` })).status).toBe(202);
  });

  it('a replay within the tolerance answers the first id and queues nothing; after it, 401', async () => {
    gw.clock.set('2031-01-01T12:00:00Z');
    const link = await signedLink();
    const hdrs = headers(link.signing_secret);
    const first = await post(link.url, hdrs);
    expect(first.status).toBe(202);
    const counts = await submissions.getJobCounts();
    const again = await post(link.url, hdrs);
    expect(again).toEqual(first);
    expect(await submissions.getJobCounts()).toEqual(counts);
    gw.clock.set(new Date(gw.clock.now().getTime() + 301_000));
    const late = await post(link.url, hdrs);
    expect(late).toEqual({ status: 401, body: { message: 'Invalid signature.' } });
  });

  it('after a rotation the old secret verifies for 24 hours, not after; the new one from the start', async () => {
    gw.clock.set('2031-01-01T12:00:00Z');
    const link = await signedLink();
    const rotated = await team.api.post(`/api/smart-links/${link.id}/rotate-secret`);
    const fresh = rotated.body.data.signing_secret as string;
    expect(rotated.body.data.previous_secret_expires_at).toBe('2031-01-02T12:00:00.000000Z');
    expect((await post(link.url, headers(fresh))).status).toBe(202);
    expect((await post(link.url, headers(link.signing_secret))).status).toBe(202);
    gw.clock.set('2031-01-02T11:59:59Z');
    expect((await post(link.url, headers(link.signing_secret))).status).toBe(202);
    gw.clock.set('2031-01-02T12:00:00Z');
    expect((await post(link.url, headers(link.signing_secret))).status).toBe(401);
    expect((await post(link.url, headers(fresh))).status).toBe(202);
    // A second rotation ends the first secret's grace at once.
    const again = (await team.api.post(`/api/smart-links/${link.id}/rotate-secret`)).body.data.signing_secret as string;
    expect((await post(link.url, headers(link.signing_secret))).status).toBe(401);
    expect((await post(link.url, headers(fresh))).status).toBe(202);
    expect((await post(link.url, headers(again))).status).toBe(202);
  });
});
