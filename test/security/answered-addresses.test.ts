import { emailedAnswerKey } from '../helpers/answer-keys';
import type { TestGateway, TestTeam } from '../helpers/gateway';
import { dropPrefix, securityPrefix, startSecurityGateway } from './fixtures';

/**
 * Whether an address has answered an event is not told to whoever types it on the event
 * page: an answer without the answer's key gets the same status, headers and body for an
 * address that never answered as for one that did (no key, no cookie for either), as a
 * JSON request, as a form post and the page it returns to, and when the event is full.
 */

const NAME = 'answered';
let gw: TestGateway;
let team: TestTeam;
let cal: { public_id: string };

beforeAll(async () => {
  gw = await startSecurityGateway(NAME);
  team = await gw.newTeam({ plan: 'unlimited' });
  cal = (await team.api.post('/api/calendars', { name: 'Open', timezone: 'UTC' })).body.data;
});
afterAll(async () => {
  if (gw) await dropPrefix(gw.redis, securityPrefix(NAME));
  await gw?.close();
});

type Evt = { uid: string; public_id: string; public_url: string };
const newEvent = async (extra: Record<string, unknown> = {}): Promise<Evt> => {
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Open day', date_start: '2031-06-01 10:00', date_end: '2031-06-01 12:00', timezone: 'UTC', has_rsvp: true, ...extra });
  expect(res.status).toBe(200);
  return res.body.data as Evt;
};

/** Headers that differ between any two requests whatever they ask (the time, the request's id, the remaining rate). */
const PER_REQUEST = new Set(['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'keep-alive', 'connection']);

/** What a client sees of an answer: its status, every header but the per-request ones, and its body (`typed` put back to a placeholder). */
async function seen(res: Response, typed?: string) {
  const headers = Object.fromEntries([...res.headers.entries()].filter(([name]) => !PER_REQUEST.has(name)));
  let body = await res.text();
  if (typed) body = body.split(typed).join('TYPED');
  return { status: res.status, headers, setCookie: res.headers.getSetCookie(), body };
}

/**
 * JSON or a form; with a key in the body or the event's answer cookie, neither of them the
 * address's: made up, or the real key of another address's answer (FOREIGN, below).
 */
type How = { as: 'json' | 'form'; key?: string; cookie?: string };
function send(e: Evt, fields: Record<string, string>, how: How) {
  const body = how.key ? { ...fields, key: how.key } : fields;
  const headers: Record<string, string> = how.cookie ? { cookie: `rsvp_${e.uid}=${how.cookie}` } : {};
  if (how.as === 'json') return fetch(`${e.public_url}/rsvp`, { method: 'POST', redirect: 'manual', headers: { ...headers, 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });
  return fetch(`${e.public_url}/rsvp`, { method: 'POST', redirect: 'manual', headers: { ...headers, Accept: 'text/html' }, body: new URLSearchParams(body) });
}

const stored = async (e: Evt) =>
  ((await team.api.get(`/api/calendars/${cal.public_id}/events/${e.public_id}/rsvps`)).body.data as Array<{ email: string; name: string; answer: string }>)
    .map((r) => [r.email, r.name, r.answer])
    .sort();
/** The page a form post returns to, with the counts line (which any answer moves) left out. */
const pageAt = async (e: Evt, location: string) => (await (await fetch(new URL(location, e.public_url))).text()).replace(/<p class="meta">[^<]*<\/p>/g, '');

let n = 0;
/** A new address, as long as `like` (pages echo what was typed). */
const fresh = (like: string) => {
  const mark = String(++n).padStart(4, '0');
  return `${mark}${like.slice(mark.length)}`;
};

/** Another address's answer to the event, and its key as emailed to it. */
async function foreignKey(e: Evt) {
  const email = 'other-guest@example.com';
  await send(e, { name: 'Oli', email, answer: 'maybe' }, { as: 'json' });
  return emailedAnswerKey(gw, e.uid, email);
}

describe('an answer without its key', () => {
  const FOREIGN = 'foreign';
  const ways: Array<[string, How]> = [
    ['JSON', { as: 'json' }],
    ['JSON with a made-up key', { as: 'json', key: `AAAAAAAAAAAAAAAA.${'B'.repeat(43)}` }],
    ["JSON with another answer's key", { as: 'json', key: FOREIGN }],
    ['a form', { as: 'form' }],
    ["a form from a browser holding another answer's key", { as: 'form', cookie: FOREIGN }],
  ];
  /** The way, with another answer's real key where it asks for one. */
  const real = async (e: Evt, how: How): Promise<How> => {
    if (how.key !== FOREIGN && how.cookie !== FOREIGN) return how;
    const key = await foreignKey(e);
    return how.key ? { ...how, key } : { ...how, cookie: key };
  };

  it.each(ways)('answers %s alike for an address that never answered and for one that did', async (_, way) => {
    const e = await newEvent();
    const how = await real(e, way);
    const known = 'known-guest@example.com';
    // The address answered before (as anyone does: on the page, without a key).
    expect((await send(e, { name: 'Kim', email: known, answer: 'maybe' }, { as: 'json' })).status).toBe(202);
    const expected: Array<[string, string, string]> = [[known, 'Kim', 'maybe']];
    for (const answer of ['yes', 'maybe', 'no']) {
      const other = fresh(known);
      const first = await seen(await send(e, { name: 'Kim', email: other, answer }, how));
      const again = await seen(await send(e, { name: 'Kim', email: known, answer }, how));
      expect(again).toEqual(first);
      expect(first.setCookie).toEqual([]);
      if (how.as === 'json') {
        expect([first.status, JSON.parse(first.body)]).toEqual([202, { data: { status: 'received' } }]);
      } else {
        expect([first.status, first.headers.location]).toEqual([303, `/e/${e.uid}?rsvp=received`]);
        const page = await pageAt(e, first.headers.location);
        expect(page).toContain('<b>Thanks, your answer was received.</b> Check your email');
        expect(await pageAt(e, again.headers.location)).toEqual(page);
      }
      expected.push([other, 'Kim', answer]);
    }
    // The new addresses' answers are in; the known one's stands.
    if (how.key !== way.key || how.cookie !== way.cookie) expected.push(['other-guest@example.com', 'Oli', 'maybe']);
    expect(await stored(e)).toEqual(expected.sort());
  });

  it.each(ways)('refuses a yes alike when the event is full (%s), whoever the address', async (_, way) => {
    const e = await newEvent({ rsvp_limit: 1 });
    const how = await real(e, way);
    const holder = 'holder-guest@example.com';
    const maybe = 'maybes-guest@example.com';
    await send(e, { name: 'Hal', email: holder, answer: 'yes' }, { as: 'json' });
    await send(e, { name: 'May', email: maybe, answer: 'maybe' }, { as: 'json' });
    const before = await stored(e);
    expect(before.filter(([email]) => email !== 'other-guest@example.com')).toEqual([[holder, 'Hal', 'yes'], [maybe, 'May', 'maybe']]);
    const other = fresh(holder);
    const answers = [
      await seen(await send(e, { name: 'Sam', email: other, answer: 'yes' }, how), other),
      // One whose answer would become a yes, and the one whose yes holds the place.
      await seen(await send(e, { name: 'Sam', email: maybe, answer: 'yes' }, how), maybe),
      await seen(await send(e, { name: 'Sam', email: holder, answer: 'yes' }, how), holder),
    ];
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[0].status).toBe(409);
    expect(answers[0].setCookie).toEqual([]);
    if (how.as === 'json') expect(JSON.parse(answers[0].body)).toEqual({ message: 'This event is full: no more places for a yes.' });
    expect(await stored(e)).toEqual(before);
  });
});

describe("a new address's answer", () => {
  it('is recorded at once, and its key reaches the address by email alone: the confirmation, or for a no its answer link', async () => {
    const e = await newEvent();
    const messages = async (email: string) =>
      (await gw.db('deliveries as d').join('events as e', 'e.id', 'd.event_id').where('e.uid', e.uid).where('d.email', email).orderBy('d.id').select('d.kind')).map((d) => d.kind as string);
    for (const [answer, kind] of [['yes', 'rsvp_yes'], ['maybe', 'rsvp_maybe'], ['no', 'rsvp_link']]) {
      const email = `first-${answer}@example.com`;
      const res = await send(e, { name: 'Fay', email, answer }, { as: 'json' });
      expect([res.status, await res.json(), res.headers.getSetCookie()]).toEqual([202, { data: { status: 'received' } }, []]);
      expect(await messages(email)).toEqual([kind]);
      // The emailed key is the address's: with it, the answer changes, and comes back with the key.
      const key = await emailedAnswerKey(gw, e.uid, email);
      const changed = await send(e, { name: 'Fay F.', email, answer: answer === 'no' ? 'maybe' : 'no' }, { as: 'json', key });
      expect(changed.status).toBe(200);
      expect(changed.headers.getSetCookie()).toEqual([expect.stringMatching(new RegExp(`^rsvp_${e.uid}=${key.replace(/\./g, '\\.')};`))]);
      expect(await changed.json()).toMatchObject({ data: { email, name: 'Fay F.', key } });
    }
    expect((await team.api.get(`/api/events/${e.public_id}`)).body.data.rsvp_counts).toEqual({ yes: 0, maybe: 1, no: 2 });
  });
});
