import { emailedAnswerKey } from '../helpers/answer-keys';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';

let gw: TestGateway;
let team: TestTeam;
let cal: { public_id: string };

beforeAll(async () => {
  // A queue of its own: the answers' keys are read from the mail jobs they queue.
  gw = await startGateway({ QUEUE_PREFIX: isolatedPrefix('rsvps') });
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Events', timezone: 'UTC' })).body.data;
});
afterAll(() => gw.close());

const base = { title: 'Workshop', date_start: '2030-06-01 10:00', date_end: '2030-06-01 12:00', timezone: 'UTC', has_rsvp: true };

async function event(extra: Record<string, unknown> = {}) {
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, { ...base, ...extra });
  expect(res.status).toBe(200);
  return res.body.data as { uid: string; public_id: string; public_url: string; rsvp_counts: Record<string, number> };
}

const answer = (uid: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
  gw.anon.post(`/e/${uid}/rsvp`, body, { headers });
/** What an answer without its key gets, whether or not the address had answered. */
const RECEIVED = { data: { status: 'received' } };
/** The event's answers, as the organizer lists them. */
const rsvpsOf = async (e: { public_id: string }) =>
  (await team.api.get(`/api/calendars/${cal.public_id}/events/${e.public_id}/rsvps?per_page=500`)).body.data as Array<{ id: string; name: string; email: string; answer: string }>;
const idOf = async (e: { public_id: string }, email: string) => (await rsvpsOf(e)).find((r) => r.email === email)?.id as string;

describe('RSVPs on the event page', () => {
  it('the page shows a form; a form post saves the answer and returns to the page', async () => {
    const e = await event();
    const page = await fetch(e.public_url).then((r) => r.text());
    expect(page).toContain(`action="/e/${e.uid}/rsvp"`);
    expect(page).toContain('0 going · 0 maybe');
    const res = await fetch(`${e.public_url}/rsvp`, { method: 'POST', body: new URLSearchParams({ name: 'Ada', email: 'ada@example.com', answer: 'yes' }), redirect: 'manual' });
    expect([res.status, res.headers.get('location'), res.headers.get('set-cookie')]).toEqual([303, `/e/${e.uid}?rsvp=received`, null]);
    const after = await fetch(`${e.public_url}?rsvp=received`).then((r) => r.text());
    expect(after).toContain('<b>Thanks, your answer was received.</b> Check your email: a link to change your answer is sent to the address you gave');
    expect(after).toContain('1 going · 0 maybe');
    const api = await team.api.get(`/api/events/${e.public_id}`);
    expect(api.body.data.rsvp_counts).toEqual({ yes: 1, maybe: 0, no: 0 });
  });

  it("one answer per email: a second answer with the first one's key (from its email) replaces it", async () => {
    const e = await event();
    const first = await answer(e.uid, { name: 'Bo', email: 'Bo@Example.com', answer: 'yes' });
    expect([first.status, first.body, first.headers.get('set-cookie')]).toEqual([202, RECEIVED, null]);
    expect(await rsvpsOf(e)).toEqual([expect.objectContaining({ id: expect.stringMatching(/^rsvp_/), name: 'Bo', email: 'bo@example.com', answer: 'yes' })]);
    const key = await emailedAnswerKey(gw, e.uid, 'bo@example.com');
    const second = await answer(e.uid, { name: 'Bo B.', email: 'bo@example.com', answer: 'no', key });
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({ id: await idOf(e, 'bo@example.com'), name: 'Bo B.', answer: 'no', key });
    expect(second.headers.get('set-cookie')).toMatch(new RegExp(`^rsvp_${e.uid}=${key}; `));
    const list = await team.api.get(`/api/calendars/${cal.public_id}/events/${e.public_id}/rsvps`);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).not.toHaveProperty('key');
    expect(list.body.meta.totals).toEqual({ yes: 0, maybe: 0, no: 1 });
  });

  describe('an answer changes only with its key', () => {
    const linkMails = (e: { uid: string }) =>
      gw.db('deliveries as d').join('events as e', 'e.id', 'd.event_id').where({ 'e.uid': e.uid, 'd.kind': 'rsvp_link' }).orderBy('d.id').select('d.email', 'd.sequence');
    const stored = async (e: { public_id: string }) =>
      (await team.api.get(`/api/calendars/${cal.public_id}/events/${e.public_id}/rsvps`)).body.data.map((r: { name: string; answer: string }) => [r.name, r.answer]);

    it('without the key the answer stands (202), and the address is sent its link at most once an hour', async () => {
      const e = await event({ rsvp_limit: 1 });
      const mine = await answer(e.uid, { name: 'Vic', email: 'vic@example.com', answer: 'yes' });
      expect([mine.status, mine.body]).toEqual([202, RECEIVED]);
      const others: Array<Record<string, string>> = [
        { name: 'Mallory', email: 'VIC@example.com', answer: 'no' },
        { name: 'Mallory', email: 'vic@example.com', answer: 'maybe', key: 'made-up' },
        { name: 'Mallory', email: 'vic@example.com', answer: 'no', key: `${(await idOf(e, 'vic@example.com')).slice(5)}.${'A'.repeat(43)}` },
      ];
      for (const other of others) {
        const res = await answer(e.uid, other);
        expect([res.status, res.body, res.headers.get('set-cookie')]).toEqual([202, RECEIVED, null]);
      }
      expect(await stored(e)).toEqual([['Vic', 'yes']]);
      expect(await linkMails(e)).toEqual([{ email: 'vic@example.com', sequence: 0 }]);
      // A first no is confirmed by nothing else: its key goes in an answer link.
      expect((await answer(e.uid, { name: 'Eve', email: 'eve@example.com', answer: 'no' })).body).toEqual(RECEIVED);
      expect(await linkMails(e)).toEqual([{ email: 'vic@example.com', sequence: 0 }, { email: 'eve@example.com', sequence: 0 }]);
      // A key is for its own answer only.
      const eveKey = await emailedAnswerKey(gw, e.uid, 'eve@example.com');
      expect((await answer(e.uid, { name: 'Eve', email: 'vic@example.com', answer: 'no', key: eveKey })).status).toBe(202);
      // The same answer again says the same, and sends nothing: it would change nothing.
      const again = await answer(e.uid, { name: 'Eve', email: 'eve@example.com', answer: 'no' });
      expect([again.status, again.body]).toEqual([202, RECEIVED]);
      expect(await linkMails(e)).toHaveLength(2);
      // The full event refuses a keyless yes whoever the address: it tells nothing either way.
      for (const who of ['eve@example.com', 'vic@example.com', 'new@example.com']) {
        const full = await answer(e.uid, { name: 'Eve', email: who, answer: 'yes' });
        expect([who, full.status, full.body]).toEqual([who, 409, { message: 'This event is full: no more places for a yes.' }]);
      }
      // With her key, Eve still cannot take a place there is not.
      expect((await answer(e.uid, { name: 'Eve', email: 'eve@example.com', answer: 'yes', key: eveKey })).status).toBe(409);
      // An hour on, a lost link can be asked for again.
      await gw.db('deliveries').where({ kind: 'rsvp_link', email: 'vic@example.com' }).update({ created_at: gw.db.raw("now() - interval '61 minutes'") });
      expect((await answer(e.uid, { name: 'Vic', email: 'vic@example.com', answer: 'no' })).status).toBe(202);
      expect(await linkMails(e)).toEqual([
        { email: 'vic@example.com', sequence: 0 },
        { email: 'eve@example.com', sequence: 0 },
        { email: 'vic@example.com', sequence: 1 },
      ]);
      expect(await stored(e)).toEqual([['Vic', 'yes'], ['Eve', 'no']]);
    });

    it('a new answer whose confirmation was made before (an invitee answering again) is sent its link instead', async () => {
      const e = await event();
      const eventPath = `/api/calendars/${cal.public_id}/events/${e.public_id}`;
      const kinds = async () =>
        (await gw.db('deliveries as d').join('events as e', 'e.id', 'd.event_id').where({ 'e.uid': e.uid, 'd.email': 'ivy@example.com' }).orderBy('d.id').select('d.kind')).map((d) => d.kind as string);
      expect((await team.api.post(`${eventPath}/invites`, { invitees: [{ email: 'ivy@example.com', name: 'Ivy' }] })).status).toBe(200);
      expect((await answer(e.uid, { name: 'Ivy', email: 'ivy@example.com', answer: 'yes' })).body).toEqual(RECEIVED);
      // Her invitation stands, so deleting her answer sends nothing and keeps the SEQUENCE.
      expect((await team.api.delete(`${eventPath}/rsvps/${await idOf(e, 'ivy@example.com')}`)).body.data.cancellation_queued).toBe(false);
      expect((await answer(e.uid, { name: 'Ivy', email: 'ivy@example.com', answer: 'yes' })).body).toEqual(RECEIVED);
      // The yes was confirmed at this SEQUENCE already: the new answer's key goes in its link.
      expect(await kinds()).toEqual(['invitation', 'rsvp_yes', 'rsvp_link']);
      const key = await emailedAnswerKey(gw, e.uid, 'ivy@example.com');
      expect((await answer(e.uid, { name: 'Ivy', email: 'ivy@example.com', answer: 'maybe', key })).status).toBe(200);
    });

    it("the answer's key reaches a browser through the emailed link; without it, a browser gets the same note", async () => {
      const e = await event();
      const post = (body: Record<string, string>, cookie?: string) =>
        fetch(`${e.public_url}/rsvp`, { method: 'POST', body: new URLSearchParams(body), redirect: 'manual', headers: cookie ? { cookie } : {} });
      const first = await post({ name: 'Ada', email: 'ada@example.com', answer: 'yes' });
      expect([first.status, first.headers.get('location'), first.headers.get('set-cookie')]).toEqual([303, `/e/${e.uid}?rsvp=received`, null]);
      // The link in Ada's confirmation keeps the key in the browser that opens it.
      const opened = await fetch(`${e.public_url}/rsvp?key=${await emailedAnswerKey(gw, e.uid, 'ada@example.com')}`, { redirect: 'manual' });
      const setCookie = opened.headers.get('set-cookie') as string;
      expect(setCookie).toMatch(new RegExp(`^rsvp_${e.uid}=[A-Za-z0-9]{16}\\.[A-Za-z0-9_-]{43}; Max-Age=31536000; Path=/e/${e.uid}; HttpOnly; SameSite=Lax$`));
      const cookie = setCookie.split(';')[0];

      const elsewhere = await post({ name: 'Ada', email: 'ada@example.com', answer: 'no' });
      expect([elsewhere.status, elsewhere.headers.get('location'), elsewhere.headers.get('set-cookie')]).toEqual([303, `/e/${e.uid}?rsvp=received`, null]);
      expect(await fetch(`${e.public_url}?rsvp=received`).then((r) => r.text())).toContain('Thanks, your answer was received.');
      expect(await stored(e)).toEqual([['Ada', 'yes']]);

      // This browser's page shows its answer, and the form starts from it.
      const mine = await fetch(e.public_url, { headers: { cookie } }).then((r) => r.text());
      expect(mine).toContain('Your answer: <b>Yes</b> (Ada, ada@example.com). You can change it here.');
      expect(mine).toContain('name="email" required maxlength="255" autocomplete="email" value="ada@example.com">');
      expect(mine).toContain('<input type="radio" name="answer" value="yes" checked>');
      expect(await fetch(e.public_url).then((r) => r.text())).not.toContain('Your answer:');

      const here = await post({ name: 'Ada L.', email: 'ada@example.com', answer: 'no' }, cookie);
      expect([here.status, here.headers.get('location'), here.headers.get('set-cookie')?.split(';')[0]]).toEqual([303, `/e/${e.uid}?rsvp=thanks`, cookie]);
      expect(await fetch(`${e.public_url}?rsvp=thanks`, { headers: { cookie } }).then((r) => r.text())).toContain('Thanks, your answer is saved.');
      expect(await stored(e)).toEqual([['Ada L.', 'no']]);
      expect(await fetch(e.public_url, { headers: { cookie } }).then((r) => r.text())).toContain('<input type="radio" name="answer" value="no" checked>');
    });

    it("the answer link keeps the key in the browser (and opens a protected event); a removed answer's link is a 404", async () => {
      const e = await event({ access_code: 'letmein' });
      const signed = (await team.api.post(`/api/calendars/${cal.public_id}/events/${e.public_id}/signed-url`, {})).body.url as string;
      const sent = await fetch(signed.replace('?', '/rsvp?'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ name: 'Lin', email: 'lin@example.com', answer: 'maybe' }),
      });
      expect(sent.status).toBe(202);
      const given = { data: { id: await idOf(e, 'lin@example.com'), key: await emailedAnswerKey(gw, e.uid, 'lin@example.com') } };
      const link = `${e.public_url}/rsvp?key=${given.data.key}`;
      const opened = await fetch(link, { redirect: 'manual' });
      expect([opened.status, opened.headers.get('location'), opened.headers.get('referrer-policy')]).toEqual([303, `/e/${e.uid}#rsvp-title`, 'no-referrer']);
      const cookie = opened.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      expect(cookie).toContain(`rsvp_${e.uid}=${given.data.key}`);
      expect((await fetch(e.public_url, { headers: { cookie } })).status).toBe(200);
      const changed = await fetch(`${e.public_url}/rsvp`, {
        method: 'POST',
        headers: { cookie, 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ name: 'Lin', email: 'lin@example.com', answer: 'yes' }),
      });
      expect(changed.status).toBe(200);
      expect(await stored(e)).toEqual([['Lin', 'yes']]);

      await team.api.delete(`/api/calendars/${cal.public_id}/events/${e.public_id}/rsvps/${given.data.id}`);
      const gone = await fetch(link, { redirect: 'manual' });
      expect([gone.status, gone.headers.get('set-cookie')]).toEqual([404, null]);
      expect(await gone.text()).toContain('This answer link is not valid any more');
      for (const bad of ['nonsense', `${given.data.key}x`]) expect((await fetch(`${e.public_url}/rsvp?key=${bad}`, { redirect: 'manual' })).status).toBe(404);
      expect((await fetch(`${e.public_url}/rsvp`, { redirect: 'manual' })).status).toBe(422);
    });
  });

  it('a refused form answer shows the page again: what was typed kept, each problem beside its field', async () => {
    const e = await event({ rsvp_limit: 1 });
    const post = (fields: Record<string, string>) => fetch(`${e.public_url}/rsvp`, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
    const bad = await post({ name: 'Ada <Lovelace>', email: 'ada@nowhere', answer: 'yes' });
    expect([bad.status, bad.headers.get('content-type')]).toEqual([422, 'text/html; charset=utf-8']);
    const page = await bad.text();
    expect(page).toContain('<b>Your answer was not saved.</b>');
    expect(page).toContain('value="Ada &lt;Lovelace&gt;"');
    expect(page).toContain('value="ada@nowhere" aria-invalid="true" aria-describedby="rsvp-email-error">');
    expect(page).toMatch(/<p class="error" id="rsvp-email-error"[^>]*>Please enter a valid email address\.<\/p>/);
    expect(page).not.toContain('id="rsvp-name-error"');
    expect(page).toContain('<input type="radio" name="answer" value="yes" checked>');
    // Full: the yes is refused beside the answer, the rest kept.
    expect((await post({ name: 'Bea', email: 'bea@example.com', answer: 'yes' })).status).toBe(303);
    const full = await post({ name: 'Cy', email: 'cy@example.com', answer: 'yes' });
    expect(full.status).toBe(409);
    const fullPage = await full.text();
    expect(fullPage).toContain('value="cy@example.com"');
    expect(fullPage).toMatch(/id="rsvp-answer-error"[^>]*>[^<]*full/);
  });

  it('validates every field, and refuses events without RSVPs', async () => {
    const e = await event();
    const bad = await answer(e.uid, { name: '', email: 'nope', answer: 'perhaps' });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['answer', 'email', 'name']);
    const big = await fetch(`${e.public_url}/rsvp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(9000), email: 'a@b.co', answer: 'yes' }) });
    expect(big.status).toBe(413);
  });

  it('an event without RSVPs answers 409 (its page is there, it takes no answers)', async () => {
    const closed = await event({ has_rsvp: false });
    expect((await fetch(closed.public_url)).status).toBe(200);
    expect(await fetch(closed.public_url).then((r) => r.text())).not.toContain('/rsvp');
    const json = await answer(closed.uid, { name: 'A', email: 'a@example.com', answer: 'yes' });
    expect(json.status).toBe(409);
    expect(json.body).toEqual({ message: 'This event does not take RSVPs.' });
    const page = await fetch(`${closed.public_url}/rsvp`, { method: 'POST', body: new URLSearchParams({ name: 'A', email: 'a@example.com', answer: 'yes' }), redirect: 'manual' });
    expect(page.status).toBe(409);
    expect(await page.text()).toContain('This event does not take RSVPs.');
    // a protected one tells nothing before access
    const locked = await event({ has_rsvp: false, access_code: 'secret-code' });
    expect((await answer(locked.uid, { name: 'A', email: 'a@example.com', answer: 'yes' })).status).toBe(403);
    expect((await answer('AAAAAAAAAAAAAAAA', { name: 'A', email: 'a@example.com', answer: 'yes' })).status).toBe(404);
    const list = await team.api.get(`/api/calendars/${cal.public_id}/events/${closed.public_id}/rsvps`);
    expect(list.body.data).toEqual([]);
  });

  it('takes form-urlencoded or JSON: any other content type is a 415, not missing fields', async () => {
    const e = await event();
    const json = await gw.anon.request('POST', `/e/${e.uid}/rsvp`, { raw: 'name=A&email=a@example.com&answer=yes', contentType: 'text/plain' });
    expect(json.status).toBe(415);
    expect(json.body).toEqual({ message: 'Unsupported content type: send application/x-www-form-urlencoded or application/json.' });
    const multipart = new FormData();
    for (const [k, v] of Object.entries({ name: 'A', email: 'a@example.com', answer: 'yes' })) multipart.set(k, v);
    const page = await fetch(`${e.public_url}/rsvp`, { method: 'POST', body: multipart, redirect: 'manual' });
    expect(page.status).toBe(415);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect((await team.api.get(`/api/events/${e.public_id}`)).body.data.rsvp_counts).toEqual({ yes: 0, maybe: 0, no: 0 });
  });

  it('names follow the invitees\' rule: no line breaks or other control characters', async () => {
    const e = await event();
    for (const name of ['Ada\r\nBcc: all@example.com', 'Ada\nLovelace', 'Ada\u0000', 'Ada\u0007Lovelace', 'Ada\tLovelace', 'Ada\u007f']) {
      const res = await answer(e.uid, { name, email: 'ada@example.com', answer: 'yes' });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['name']);
      expect(res.body.errors.name).toContain('The name field must be on one line, without control characters.');
    }
    // the same name is refused for an invitee
    const invite = await team.api.post(`/api/calendars/${cal.public_id}/events/${e.public_id}/invites`, { invitees: [{ email: 'ada@example.com', name: 'Ada\r\nBcc: all@example.com' }] });
    expect(invite.status).toBe(422);
    const ok = await answer(e.uid, { name: '  Ada Lovelace, née Byron  ', email: 'ada@example.com', answer: 'yes' });
    expect(ok.status).toBe(202);
    expect((await rsvpsOf(e)).map((r) => r.name)).toEqual(['Ada Lovelace, née Byron']);
  });

  it('rsvp_limit caps the yes answers, also under 50 simultaneous answers', async () => {
    const e = await event({ rsvp_limit: 10 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => fetch(`${e.public_url}/rsvp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-Forwarded-For': `10.0.0.${i}` }, body: JSON.stringify({ name: `P${i}`, email: `p${i}@example.com`, answer: 'yes' }) })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(40);
    expect(await results.find((r) => r.status === 409)?.json()).toEqual({ message: 'This event is full: no more places for a yes.' });
    const list = await team.api.get(`/api/calendars/${cal.public_id}/events/${e.public_id}/rsvps?answer=yes&per_page=500`);
    expect(list.body.data).toHaveLength(10);
    expect(list.body.meta.totals.yes).toBe(10);
    // full: maybe and no still work, and the page says so
    expect((await answer(e.uid, { name: 'M', email: 'm@example.com', answer: 'maybe' })).status).toBe(202);
    expect(await fetch(e.public_url).then((r) => r.text())).toContain('This event is full');
    // someone who holds a place (with the key of their emailed link) sees their yes, still theirs to keep
    const holder = `p${statuses.indexOf(202)}@example.com`;
    const holderCookie = `rsvp_${e.uid}=${await emailedAnswerKey(gw, e.uid, holder)}`;
    const theirs = await fetch(e.public_url, { headers: { cookie: holderCookie } }).then((r) => r.text());
    expect(theirs).toContain('<input type="radio" name="answer" value="yes" checked>');
    expect(theirs).not.toContain('This event is full');
    // a place freed by deleting an RSVP can be taken again
    await team.api.delete(`/api/calendars/${cal.public_id}/events/${e.public_id}/rsvps/${list.body.data[0].id}`);
    expect((await answer(e.uid, { name: 'Late', email: 'late@example.com', answer: 'yes' })).status).toBe(202);
  });

  it('protected events need the same access as their page', async () => {
    const e = await event({ access_code: 'secret-code' });
    expect((await answer(e.uid, { name: 'A', email: 'a@example.com', answer: 'yes' })).status).toBe(403);
    const signed = new URL((await team.api.post(`/api/calendars/${cal.public_id}/events/${e.public_id}/signed-url`, {})).body.url);
    const ok = await gw.anon.post(`/e/${e.uid}/rsvp${signed.search}`, { name: 'A', email: 'a@example.com', answer: 'yes' });
    expect(ok.status).toBe(202);
    const page = await fetch(signed.href).then((r) => r.text());
    expect(page).toContain(`action="/e/${e.uid}/rsvp${signed.search.replace(/&/g, '&amp;')}"`);
  });
});

describe('spam guard', () => {
  it('limits answers per address', async () => {
    const strict = await startGateway({ RSVP_RATE_PER_10_MINUTES: '2', QUEUE_PREFIX: isolatedPrefix('rsvp_strict') });
    try {
      const own = await strict.newTeam();
      const c = (await own.api.post('/api/calendars', { name: 'E', timezone: 'UTC' })).body.data;
      const e = (await own.api.post(`/api/calendars/${c.public_id}/events`, base)).body.data;
      const send = (i: number) => strict.anon.post(`/e/${e.uid}/rsvp`, { name: 'A', email: `a${i}@example.com`, answer: 'yes' });
      expect((await send(1)).headers.get('x-ratelimit-remaining')).toBe('1');
      expect((await send(2)).status).toBe(202);
      const third = await send(3);
      expect(third.status).toBe(429);
      expect(third.body).toEqual({ message: 'Too Many Attempts.' });
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await strict.close();
    }
  });
});

describe('RSVPs in the API', () => {
  it('lists with a filter and cursor, deletes, exports CSV, and stays in its team', async () => {
    const e = await event();
    for (const [i, a] of ['yes', 'maybe', 'no', 'yes', 'yes'].entries()) await answer(e.uid, { name: i === 0 ? '=HYPERLINK("x")' : `Guest, ${i}`, email: `g${i}@example.com`, answer: a });
    const path = `/api/calendars/${cal.public_id}/events/${e.public_id}/rsvps`;
    const p1 = await team.api.get(`${path}?per_page=2`);
    const p2 = await team.api.get(`${path}?per_page=2&cursor=${p1.body.meta.next_cursor}`);
    const p3 = await team.api.get(`${path}?per_page=2&cursor=${p2.body.meta.next_cursor}`);
    expect([...p1.body.data, ...p2.body.data, ...p3.body.data].map((r: { email: string }) => r.email)).toEqual(['g0@example.com', 'g1@example.com', 'g2@example.com', 'g3@example.com', 'g4@example.com']);
    expect(p3.body.meta.next_cursor).toBeNull();
    expect(p1.body.meta.totals).toEqual({ yes: 3, maybe: 1, no: 1 });
    expect((await team.api.get(`${path}?answer=yes`)).body.data).toHaveLength(3);

    const csv = await fetch(`${gw.baseUrl}${path}.csv`, { headers: { Authorization: `Bearer ${team.token}` } });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe('id,name,email,answer,created_at,updated_at');
    expect(lines).toHaveLength(6);
    expect(lines[1]).toContain(`"'=HYPERLINK(""x"")"`); // never a formula in a spreadsheet
    expect(lines[2]).toContain('"Guest, 1",g1@example.com,maybe');

    // A yes had put the event in g0's calendar: deleting it queues them a cancellation.
    const del = await team.api.delete(`${path}/${p1.body.data[0].id}`);
    expect(del.body).toEqual({ data: { id: p1.body.data[0].id, deleted: true, cancellation_queued: true } });
    // A no never had the event: nothing to take back.
    const no = (await team.api.get(`${path}?answer=no`)).body.data[0];
    expect((await team.api.delete(`${path}/${no.id}`)).body).toEqual({ data: { id: no.id, deleted: true, cancellation_queued: false } });
    const sent = await gw.db('deliveries as d').join('events as ev', 'ev.id', 'd.event_id').where('ev.uid', e.uid).orderBy('d.id').select('d.email', 'd.kind');
    expect(sent.filter((d) => d.email === 'g0@example.com').map((d) => d.kind)).toEqual(['rsvp_yes', 'removal']);
    // A first no had only its answer link.
    expect(sent.filter((d) => d.email === 'g2@example.com').map((d) => d.kind)).toEqual(['rsvp_link']);
    await answer(e.uid, { name: 'Again', email: 'g2@example.com', answer: 'no' });
    expect((await team.api.get(path)).body.meta.totals).toEqual({ yes: 2, maybe: 1, no: 1 });
    expect((await team.api.delete(`${path}/${p1.body.data[0].id}`)).status).toBe(404);

    const other = await gw.newTeam();
    expect((await other.api.get(path)).status).toBe(404);
    expect((await other.api.delete(`${path}/${p1.body.data[1].id}`)).status).toBe(404);
    expect((await fetch(`${gw.baseUrl}${path}.csv`, { headers: { Authorization: `Bearer ${other.token}` } })).status).toBe(404);
  });
});
