import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';

/**
 * The public pages' languages: a page comes in the language of `?lang=`, else of
 * Accept-Language, else the calendar's, else English, its dates written by Intl for that
 * language. (That the catalogs say everything English says: test/shared/i18n-catalogs.test.ts.)
 */
const PERSON = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

describe('pages', () => {
  let gw: TestGateway;
  let team: TestTeam;
  let cal: { public_id: string; public_url: string };
  let event: { public_url: string };

  beforeAll(async () => {
    gw = await startGateway();
    team = await gw.newTeam();
    cal = (await team.api.post('/api/calendars', { name: 'Sprachen', timezone: 'Europe/Berlin' })).body.data;
    event = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Launch', date_start: '2031-09-17 18:30', date_end: '2031-09-17 21:00', timezone: 'Europe/Berlin', has_rsvp: true })).body.data;
  });
  afterAll(() => gw.close());

  const page = async (url: string, headers: Record<string, string> = {}) => {
    const res = await fetch(url, { headers: { 'User-Agent': PERSON, ...headers } });
    expect(res.status).toBe(200);
    expect(res.headers.get('vary')).toContain('Accept-Language');
    return res.text();
  };
  const start = Date.UTC(2031, 8, 17, 16, 30);
  const end = Date.UTC(2031, 8, 17, 19, 0);
  const whenIn = (locale: string) =>
    new Intl.DateTimeFormat(locale, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone: 'Europe/Berlin', timeZoneName: 'short' }).formatRange(start, end);
  const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

  it("falls back on the calendar's locale when the browser names none of ours", async () => {
    const fr = (await team.api.post('/api/calendars', { name: 'Agenda', timezone: 'Europe/Paris', locale: 'fr' })).body.data;
    expect(fr.locale).toBe('fr');
    const evt = (await team.api.post(`/api/calendars/${fr.public_id}/events`, { title: 'Atelier', date_start: '2031-09-17 18:30', date_end: '2031-09-17 21:00', timezone: 'Europe/Paris' })).body.data;
    expect(await page(evt.public_url)).toContain('<html lang="fr">');
    expect(await page(evt.public_url, { 'Accept-Language': 'sv-SE,sv;q=0.9' })).toContain('<html lang="fr">');
    expect(await page(fr.public_url, { 'Accept-Language': 'sv' })).toContain('<html lang="fr">');
    // The visitor's own language and ?lang= come first.
    expect(await page(evt.public_url, { 'Accept-Language': 'de' })).toContain('<html lang="de">');
    expect(await page(`${evt.public_url}?lang=ja`, { 'Accept-Language': 'de' })).toContain('<html lang="ja">');
    // Set back to none: English.
    expect((await team.api.put(`/api/calendars/${fr.public_id}`, { name: 'Agenda', timezone: 'Europe/Paris', locale: null })).body.data.locale).toBeNull();
    expect(await page(evt.public_url, { 'Accept-Language': 'sv' })).toContain('<html lang="en">');
    const refused = await team.api.post('/api/calendars', { name: 'Kalender', timezone: 'Europe/Stockholm', locale: 'sv' });
    expect(refused.status).toBe(422);
    expect(Object.keys(refused.body.errors)).toEqual(['locale']);
  });

  it('follows ?lang=, then Accept-Language, then English', async () => {
    const de = await page(`${event.public_url}?lang=de`, { 'Accept-Language': 'fr' });
    expect(de).toContain('<html lang="de">');
    expect(de).toContain('<span>Zum Kalender hinzufügen</span>');
    expect(de).toContain(`<b>Wann</b> ${escaped(whenIn('de'))}`);
    expect(de).toContain('Antwort senden');

    const fr = await page(event.public_url, { 'Accept-Language': 'fr-FR,fr;q=0.9,en;q=0.5' });
    expect(fr).toContain('<html lang="fr">');
    expect(fr).toContain('<span>Ajouter au calendrier</span>');
    expect(fr).toContain(`<b>Quand</b> ${escaped(whenIn('fr'))}`);

    const ja = await page(event.public_url, { 'Accept-Language': 'ja' });
    expect(ja).toContain('<span>カレンダーに追加</span>');
    expect(ja).toContain(escaped(whenIn('ja')));

    for (const headers of [{}, { 'Accept-Language': 'sv-SE,fi;q=0.8' }] as Array<Record<string, string>>) {
      const en = await page(`${event.public_url}?lang=xx`, headers);
      expect(en).toContain('<html lang="en">');
      expect(en).toContain('<span>Add to calendar</span>');
      expect(en).toContain('<b>When</b> Wed Sep 17, 2031 6:30 PM - 9:00 PM (CEST)');
    }
  });

  it('the calendar page and the embeds too, months named in the language', async () => {
    // A title that looks like a placeholder stays as it is.
    await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Party {{title}}', date_start: '2031-09-20 18:30', date_end: '2031-09-20 21:00', timezone: 'Europe/Berlin' });
    const calendar = await page(`${cal.public_url}?lang=es`);
    expect(calendar).toContain('aria-label="Añadir al calendario: Party {{title}}"');
    expect(calendar).toContain('<h2 id="upcoming">Próximos eventos</h2>');
    expect(calendar).toContain(`>${new Intl.DateTimeFormat('es', { month: 'long', year: 'numeric', timeZone: 'Europe/Berlin' }).format(start)}</h3>`);
    expect(calendar).toContain('>Feed ICS</a>');
    const embed = await page(`${event.public_url}/embed?lang=nl`);
    expect(embed).toContain('<span>Toevoegen aan agenda</span>');
    const calendarEmbed = await page(`${cal.public_url}/embed`, { 'Accept-Language': 'it' });
    expect(calendarEmbed).toContain('Iscriviti a questo calendario');
  });
});
