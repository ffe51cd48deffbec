import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';

/**
 * Characters that reorder or hide text: "Invoice \u202Egnp.exe" reads as "Invoice exe.png" in
 * a mail subject or a calendar app. Free text refuses bidirectional controls, and email
 * addresses refuse every invisible or control character; people's text in any script still
 * goes in as written.
 */
let gw: TestGateway;
let team: TestTeam;
let cal: { public_id: string };

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'UTC' })).body.data;
});
afterAll(() => gw.close());

const event = (fields: Record<string, unknown>) =>
  team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Review', date_start: '2031-02-01 10:00', date_end: '2031-02-01 11:00', timezone: 'UTC', ...fields });

it('refuses bidirectional controls in titles, locations and names, and keeps right-to-left text', async () => {
  for (const control of ['\u202E', '\u202D', '\u202A', '\u2066', '\u2069']) {
    for (const field of ['title', 'location', 'internal_name']) {
      const res = await event({ [field]: `Invoice ${control}gnp.exe` });
      expect([field, res.status, res.body.errors?.[field]]).toEqual([
        field,
        422,
        [`The ${field.replace('_', ' ')} field must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069).`],
      ]);
    }
  }
  const hebrew = await event({ title: 'פגישת צוות – Team sync', location: 'قاعة ١٢' });
  expect(hebrew.status).toBe(200);
  expect(hebrew.body.data).toMatchObject({ title: 'פגישת צוות – Team sync', location: 'قاعة ١٢' });
});

it('refuses invisible and control characters in email addresses', async () => {
  const evt = (await event({})).body.data;
  for (const email of ['\u202Eann@example.com', 'ann\u200B@example.com', 'ann\u00AD@example.com']) {
    const res = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email }] });
    expect([JSON.stringify(email), res.status, res.body.errors?.['invitees.0.email']]).toEqual([
      JSON.stringify(email),
      422,
      ['The invitees.0.email field must be an address without invisible or control characters.'],
    ]);
  }
  const open = (await event({ has_rsvp: true })).body.data;
  const rsvp = await gw.anon.post(`/e/${open.uid}/rsvp`, { name: 'Ann', email: '\u202Eann@example.com', answer: 'yes' });
  expect([rsvp.status, rsvp.body.errors?.email]).toEqual([422, ['The email field must be an address without invisible or control characters.']]);
});
