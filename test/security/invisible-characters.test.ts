import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { newLink, submitForm } from '../smart-links/helpers';

/**
 * Characters that reorder or hide text: "Invoice \u202Egnp.exe" reads as "Invoice exe.png" in
 * a mail subject or a calendar app. Free text refuses bidirectional controls; titles, names
 * and locations also refuse control characters (line breaks aside, but for names) and the
 * invisible format characters no script needs; email addresses refuse every invisible or control character. People's text in any
 * script still goes in as written.
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

it('refuses control and invisible format characters in titles, locations and names, and keeps what scripts need', async () => {
  const hidden = 'must not contain control or invisible format characters (such as U+0007 or U+FEFF).';
  const evt = (await event({ has_rsvp: true })).body.data;
  for (const character of ['\u0007', '\u000B', '\u007F', '\u0085', '\uFEFF', '\u2060', '\u206E', '\uFFF9']) {
    const shown = JSON.stringify(character);
    for (const field of ['title', 'location']) {
      const res = await event({ [field]: `Pay${character}pal` });
      expect([shown, field, res.status, res.body.errors?.[field]]).toEqual([shown, field, 422, [`The ${field} field ${hidden}`]]);
    }
    const calendar = await team.api.post('/api/calendars', { name: `Team${character}sync`, timezone: 'UTC' });
    expect([shown, calendar.status, calendar.body.errors?.name]).toEqual([shown, 422, [`The name field ${hidden}`]]);
    const invite = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email: 'ann@example.com', name: `Ann${character}Lee` }] });
    expect([shown, invite.status]).toEqual([shown, 422]);
    expect(invite.body.errors?.['invitees.0.name']).toEqual(expect.arrayContaining([expect.stringMatching(/control/)]));
    const rsvp = await gw.anon.post(`/e/${evt.uid}/rsvp`, { name: `Ann${character}Lee`, email: 'ann@example.com', answer: 'yes' });
    expect([shown, rsvp.status]).toEqual([shown, 422]);
    expect(rsvp.body.errors?.name).toEqual(expect.arrayContaining([expect.stringMatching(/control/)]));
  }
  // Thai word breaks, a Persian non-joiner, an emoji sequence, a right-to-left mark, a soft
  // hyphen, and an address on two lines
  const kept = ['ประชุม\u200Bทีม', 'می\u200Cخواهم', 'Family 👨\u200D👩\u200D👧', 'עברית\u200F (IL)', 'Donau\u00ADdampf'];
  for (const title of kept) {
    const res = await event({ title, location: `${title}\nSecond floor` });
    expect([title, res.status, res.body.data?.title, res.body.data?.location]).toEqual([title, 200, title, `${title}\nSecond floor`]);
  }
  const invited = await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: kept.map((name, i) => ({ email: `kept${i}@example.com`, name })) });
  expect(invited.status).toBe(200);
  // A smart link's form is refused the same, before anything is queued.
  const { link } = await newLink(gw, team);
  const submitted = await submitForm(link.url, { title: 'Pay\uFEFFpal', start: '2031-02-01 10:00' });
  expect([submitted.status, submitted.body.errors?.title]).toEqual([422, ['The title field must not contain control or invisible format characters (such as U+0007 or U+FEFF).']]);
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
