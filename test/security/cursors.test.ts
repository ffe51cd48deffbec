import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';

/**
 * List cursors are opaque: they carry the last row's sort key (a row id among it, a counter
 * every team shares, which would tell the platform's volume), so they are encrypted and
 * authenticated. A hand-made, altered or other listing's cursor is a 422 on `cursor`, never
 * a value that reaches Postgres.
 */
let gw: TestGateway;
let team: TestTeam;
let eventsPath: string;
let rsvpsPath: string;

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
  const cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
  eventsPath = `/api/calendars/${cal.public_id}/events`;
  let evt: { public_id: string; uid: string } | undefined;
  for (let i = 0; i < 3; i++) {
    evt = (await team.api.post(eventsPath, { title: `E${i}`, date_start: `2031-02-0${i + 1} 10:00`, date_end: `2031-02-0${i + 1} 11:00`, timezone: 'UTC', has_rsvp: true })).body.data;
  }
  rsvpsPath = `${eventsPath}/${evt?.public_id}/rsvps`;
  for (const name of ['Ann', 'Bo', 'Cy']) await gw.anon.post(`/e/${evt?.uid}/rsvp`, { name, email: `${name.toLowerCase()}@example.com`, answer: 'yes' });
});
afterAll(() => gw.close());

const invalid = { message: 'The cursor field is invalid.', errors: { cursor: ['The cursor field is invalid.'] } };

it('hands out cursors that reveal no id and page on', async () => {
  const first = await team.api.get(`${eventsPath}?per_page=1`);
  const cursor = first.body.meta.next_cursor as string;
  const decoded = Buffer.from(cursor, 'base64url').toString('latin1');
  expect(decoded).not.toMatch(/2031|"id"|\[\s*"/u);
  const second = await team.api.get(`${eventsPath}?per_page=1&cursor=${cursor}`);
  expect([second.status, second.body.data[0].title]).toEqual([200, 'E1']);
  const rsvps = await team.api.get(`${rsvpsPath}?per_page=1`);
  expect(rsvps.body.meta.next_cursor).not.toMatch(/^\d+$/u);
  expect((await team.api.get(`${rsvpsPath}?per_page=1&cursor=${rsvps.body.meta.next_cursor}`)).body.data).toHaveLength(1);
});

it('refuses hand-made, altered and other listings\' cursors with a 422', async () => {
  const events = (await team.api.get(`${eventsPath}?per_page=1`)).body.meta.next_cursor as string;
  const rsvps = (await team.api.get(`${rsvpsPath}?per_page=1`)).body.meta.next_cursor as string;
  const flipped = Buffer.from(events, 'base64url');
  flipped[flipped.length - 1] ^= 1;
  const forged = [
    Buffer.from(JSON.stringify(['2031-02-01 10:00:00+00', 1])).toString('base64url'),
    Buffer.from(JSON.stringify(['24:00', 1])).toString('base64url'),
    flipped.toString('base64url'),
    'AAAA',
  ];
  for (const cursor of forged) {
    const res = await team.api.get(`${eventsPath}?cursor=${cursor}`);
    expect([cursor, res.status, res.body]).toEqual([cursor, 422, invalid]);
  }
  expect((await team.api.get(`${eventsPath}?cursor=${rsvps}`)).status).toBe(422);
  expect((await team.api.get(`${rsvpsPath}?cursor=${events}`)).status).toBe(422);
  expect((await team.api.get(`${rsvpsPath}?cursor=12`)).status).toBe(422);
});
