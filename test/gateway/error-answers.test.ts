import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';

/**
 * Every error is answered by one mapping, whichever part of the gateway refused: the API,
 * the public pages (a page for a browser, JSON when asked), the smart-link ingest path that
 * runs beside Express, and the queue board. Each answer is `no-store` (a cache in front of
 * the public pages must never keep a refusal) and has the documented shape: `{"message"}`,
 * plus `errors` for a 422.
 */
let gw: TestGateway;
let team: TestTeam;

beforeAll(async () => {
  gw = await startGateway({ ADMIN_TOKEN: 'a'.repeat(32) });
  team = await gw.newTeam();
});
afterAll(() => gw.close());

interface Answer {
  status: number;
  type: string;
  cache: string | null;
  body: string;
}

async function call(path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(`${gw.baseUrl}${path}`, { redirect: 'manual', ...init });
  return { status: res.status, type: res.headers.get('content-type') ?? '', cache: res.headers.get('cache-control'), body: await res.text() };
}

const json = { Accept: 'application/json' };
const browser = { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

it('answers every refusal no-store, as {"message"} JSON or, for a browser on a public address, a page', async () => {
  const cases: Array<[string, string, RequestInit, number]> = [
    ['API unknown path', '/api/nothing-here', { headers: { ...json, Authorization: `Bearer ${team.token}` } }, 404],
    ['API without a token', '/api/calendars', { headers: json }, 401],
    ['unknown event page (JSON)', '/e/evtunknown0000000000000000', { headers: json }, 404],
    ['unknown calendar feed', '/c/calunknown0000000000000000.ics', { headers: json }, 404],
    ['personal feed of nobody', '/c/calunknown0000000000000000/feeds/nope.ics', { headers: browser }, 404],
    ['unknown smart link', '/s/nope', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }, 404],
    ['queue board without the admin token', '/admin/queues', { headers: json }, 401],
    ['unknown address', '/no/such/address', { headers: json }, 404],
  ];
  for (const [what, path, init, status] of cases) {
    const answer = await call(path, init);
    expect([what, answer.status, answer.cache, answer.type]).toEqual([what, status, 'no-store', 'application/json; charset=utf-8']);
    expect([what, Object.keys(JSON.parse(answer.body))]).toEqual([what, ['message']]);
  }
  for (const path of ['/e/evtunknown0000000000000000', '/no/such/address', '/c/calunknown0000000000000000/subscribe/google']) {
    const page = await call(path, { headers: browser });
    expect([path, page.status, page.cache, page.type]).toEqual([path, 404, 'no-store', 'text/html; charset=utf-8']);
  }
});

it('counts every 429 in the same words, wherever it comes from', async () => {
  const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Locked', date_start: '2031-02-01 10:00', date_end: '2031-02-01 11:00', timezone: 'UTC', access_code: 'right-code' })).body.data;
  let last: Answer | undefined;
  for (let i = 0; i < 12 && last?.status !== 429; i++) {
    last = await call(`/e/${evt.uid}/unlock`, { method: 'POST', headers: { ...json, 'Content-Type': 'application/json' }, body: JSON.stringify({ access_code: `wrong-${i}` }) });
  }
  expect([last?.status, last?.cache, JSON.parse(last?.body ?? '{}')]).toEqual([429, 'no-store', { message: 'Too Many Attempts.' }]);
});

it('keeps the one answer the contract spells {"error"}: a signed URL for an event without an access code', async () => {
  const cal = (await team.api.post('/api/calendars', { name: 'Open', timezone: 'UTC' })).body.data;
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Open', date_start: '2031-02-01 10:00', date_end: '2031-02-01 11:00', timezone: 'UTC' })).body.data;
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/signed-url`, {});
  expect([res.status, res.headers.get('cache-control'), Object.keys(res.body)]).toEqual([422, 'no-store', ['error']]);
});

it('says what was wrong and what is accepted: a path that does not decode, a protected event without access', async () => {
  const broken = await call(`/api/calendars/cal_%E0%A4%A`, { headers: { ...json, Authorization: `Bearer ${team.token}` } });
  expect([broken.status, JSON.parse(broken.body)]).toEqual([400, { message: expect.stringContaining('must begin a %XX escape') }]);
  const cal = (await team.api.post('/api/calendars', { name: 'Locked answers', timezone: 'UTC' })).body.data;
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Locked', date_start: '2031-02-01 10:00', date_end: '2031-02-01 11:00', timezone: 'UTC', access_code: 'right-code', has_rsvp: true })).body.data;
  const locked = 'This event is protected: open it with its access code or a signed link.';
  const page = await call(`/e/${evt.uid}`, { headers: json });
  const rsvp = await call(`/e/${evt.uid}/rsvp`, { method: 'POST', headers: { ...json, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'A', email: 'a@example.com', answer: 'yes' }) });
  expect([page.status, JSON.parse(page.body), rsvp.status, JSON.parse(rsvp.body)]).toEqual([403, { message: locked }, 403, { message: locked }]);
});
