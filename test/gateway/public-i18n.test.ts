import { inviteeAnswerKey, unsubscribeUrl } from '../../shared/links/signatures';
import { CATALOGS, type Locale, LOCALES } from '../../services/gateway/public/i18n';
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

  it("says a repeating event's rule in the page's language", async () => {
    const weekly = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Chor', date_start: '2031-09-16 19:00', date_end: '2031-09-16 21:00', timezone: 'Europe/Berlin', recurrence_rule: 'FREQ=WEEKLY;BYDAY=TU;COUNT=8' })).body.data;
    const tuesday = (locale: string) => new Intl.DateTimeFormat(locale, { weekday: 'long', timeZone: 'UTC' }).format(Date.UTC(2024, 0, 2));
    expect(await page(`${weekly.public_url}?lang=de`)).toContain(`<b>Wiederholung</b> jede Woche am ${tuesday('de')}, 8-mal</p>`);
    expect(await page(weekly.public_url, { 'Accept-Language': 'ja' })).toContain(`毎週（${tuesday('ja')}）、8回</p>`);
    expect(await page(weekly.public_url)).toContain('every week on Tuesday, 8 times</p>');
  });

  it.each(LOCALES.map((locale) => [locale]))('renders the event page, the calendar page and both embeds in %s', async (locale) => {
    const words = CATALOGS[locale as Locale];
    const pages = {
      event: await page(`${event.public_url}?lang=${locale}`),
      calendar: await page(`${cal.public_url}?lang=${locale}`),
      eventEmbed: await page(`${event.public_url}/embed?lang=${locale}`),
      calendarEmbed: await page(`${cal.public_url}/embed?lang=${locale}`),
    };
    for (const [name, html] of Object.entries(pages)) {
      expect([name, /<html lang="([a-z]+)"/.exec(html)?.[1]]).toEqual([name, locale]);
      expect([name, html.includes(escaped(words.add_to_calendar))]).toEqual([name, true]);
      // No catalog key left unfilled, and no English where the language has its own words.
      expect([name, /\{\{[a-z_]+\}\}/.test(html.replace(/Party \{\{title\}\}/g, ''))]).toEqual([name, false]);
      if (locale !== 'en') expect([name, html.includes('>Add to calendar<')]).toEqual([name, false]);
    }
    expect(pages.calendar).toContain(escaped(words.cal_upcoming));
    // English keeps its own spelling of times ("6:30 – 9:00 PM"); every other language is Intl's.
    if (locale !== 'en') expect(pages.event).toContain(escaped(whenIn(locale)));
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

  it('the pages around the event too: the lock, errors, forms, answers from an email, reminders', async () => {
    const send = (url: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(url, { method: 'POST', redirect: 'manual', headers: { 'User-Agent': PERSON, 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body).toString() });
    const text = async (res: Response) => ({ status: res.status, body: await res.text() });

    // A protected event of a French calendar: its lock page, a wrong code, a missing one.
    const fr = (await team.api.post('/api/calendars', { name: 'Privé', timezone: 'Europe/Paris', locale: 'fr' })).body.data;
    const locked = (await team.api.post(`/api/calendars/${fr.public_id}/events`, { title: 'Conseil', date_start: '2031-10-01 18:00', date_end: '2031-10-01 19:00', timezone: 'Europe/Paris', access_code: 'tulipe-42', has_rsvp: true })).body.data;
    const lock = await text(await fetch(locked.public_url, { headers: { 'User-Agent': PERSON } }));
    expect(lock.status).toBe(403);
    expect(lock.body).toContain('<html lang="fr">');
    expect(lock.body).toContain('<h1>Cet événement est protégé</h1>');
    expect(lock.body).toContain('>Code d’accès</label>');
    const wrong = await text(await send(`${locked.public_url}/unlock`, { access_code: 'rose-1234' }, { 'Accept-Language': 'de' }));
    expect(wrong.status).toBe(403);
    expect(wrong.body).toContain('<p class="error" role="alert">Dieser Zugangscode ist nicht richtig.</p>');
    const none = await text(await send(`${locked.public_url}/unlock`, {}, { 'Accept-Language': 'es' }));
    expect(none.status).toBe(422);
    expect(none.body).toContain('Introduce el código de acceso que te dieron.');
    // JSON callers keep the API's English.
    const json = await fetch(`${locked.public_url}/unlock`, { method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'Accept-Language': 'de' }, body: '{"access_code":"rose-1234"}' });
    expect(await json.json()).toEqual({ message: 'That access code is not right.' });

    // Errors: an unknown event, an unknown address.
    const unknown = await text(await fetch(`${gw.baseUrl}/e/zzzzzzzzzzzzzzzzzzzzzz`, { headers: { 'User-Agent': PERSON, 'Accept-Language': 'ja' } }));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toContain('<h1>イベントが見つかりません</h1>');
    const nowhere = await text(await fetch(`${gw.baseUrl}/nowhere?lang=nl`, { headers: { 'User-Agent': PERSON } }));
    expect([nowhere.status, nowhere.body.includes('<p>Er is niets op dit adres.</p>')]).toEqual([404, true]);

    // The event page's form, refused: each field's problem in the page's language.
    const form = await text(await send(`${event.public_url}/rsvp`, { name: 'Ada', email: 'ada@nowhere', answer: 'yes' }, { 'Accept-Language': 'it' }));
    expect(form.status).toBe(422);
    expect(form.body).toMatch(/<p class="error" id="rsvp-email-error"[^>]*>Inserisci un indirizzo e-mail valido\.<\/p>/);

    // The subscribe form of a calendar that asks who subscribes.
    const asks = (await team.api.post('/api/calendars', { name: 'Buurt', timezone: 'Europe/Amsterdam', locale: 'nl', ask_subscriber_details: true })).body.data;
    const subscribe = await text(await fetch(`${gw.baseUrl}/c/${asks.uid ?? asks.public_url.split('/c/')[1]}/subscribe/google`, { headers: { 'User-Agent': PERSON } }));
    expect(subscribe.status).toBe(200);
    expect(subscribe.body).toContain('<h1>Abonneren op Buurt</h1>');
    const refused = await text(await send(`${gw.baseUrl}/c/${asks.uid ?? asks.public_url.split('/c/')[1]}/subscribe/google`, { name: '', email: 'x' }));
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('<li id="email-error">Vul een geldig e-mailadres in.</li>');
    expect(refused.body).toContain('aria-describedby="email-error"');

    // The page an email's answer button opens, and what it says once saved.
    const invited = (await team.api.post(`/api/calendars/${fr.public_id}/events/${locked.public_id}/invites`, { invitees: [{ email: 'zoe@example.test', name: 'Zoé' }] })).body.data;
    const inviteeUid = (invited[0]?.id ?? (await team.api.get(`/api/calendars/${fr.public_id}/events/${locked.public_id}/invites`)).body.data[0].id).slice(4);
    const key = inviteeAnswerKey(gw.config.appKey, { eventUid: locked.uid ?? locked.public_url.split('/e/')[1], inviteeUid, email: 'zoe@example.test' });
    const reply = `${gw.baseUrl}/e/${locked.public_url.split('/e/')[1]}/reply`;
    const answer = await text(await fetch(`${reply}?key=${encodeURIComponent(key)}&answer=maybe`, { headers: { 'User-Agent': PERSON } }));
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('<html lang="fr">');
    expect(answer.body).toContain('Réponse pour <b>Zoé (zoe@example.test)</b>.');
    expect(answer.body).toContain('>Répondre Peut-être</button>');
    const saved = await text(await send(reply, { key, answer: 'maybe' }, { 'Accept-Language': 'pt-BR' }));
    expect(saved.body).toContain('Obrigado, sua resposta foi salva: Talvez.');

    // A reminder's unsubscribe page.
    const stop = unsubscribeUrl(gw.config.appKey, gw.baseUrl, 'reminders', locked.public_url.split('/e/')[1], 'zoe@example.test');
    const optOut = await text(await fetch(stop, { headers: { 'User-Agent': PERSON } }));
    expect(optOut.body).toContain('<h1>Arrêter les rappels ?</h1>');
    expect(optOut.body).toContain('zoe@example.test reçoit des rappels par e-mail avant « Conseil ».');
  });
});
