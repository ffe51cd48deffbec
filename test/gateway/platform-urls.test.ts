import type { EventView } from '../../shared/calendar/event-view';
import { MAX_URL, WEB_PLATFORMS, type WebPlatform } from '../../services/gateway/calendar/platform-urls';
import { linkTexts } from '../../services/gateway/public/i18n';
import { PLATFORMS } from '../../shared/calendar/platforms';

/**
 * Every web platform's add-event URL for each kind of event, written out in full from the
 * platform's format (not from our builder):
 * - Google `calendar/render?action=TEMPLATE`: `dates` in local time with `ctz`, all-day as
 *   `YYYYMMDD/YYYYMMDD` with the exclusive end, `recur=RRULE:…`, `trp` and `crm` for the busy type.
 * - Outlook.com / Office 365 `deeplink/compose`: UTC with `Z`, all-day as dates with
 *   `allday=true` and the exclusive end, the body as HTML.
 * - Yahoo `?v=60`: `ST`/`ET` as wall-clock time without `Z`, one all-day day as
 *   `ST=<date>&DUR=allday` (no `ET`), longer all-day events as `ST`/`ET` dates with the
 *   exclusive end (no `DUR`, which Yahoo ignores beside `ET`).
 */
const PAGE = 'https://cal.example/e/ev1';
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

function view(v: Partial<EventView>): EventView {
  return {
    uid: 'ev1',
    title: 'Board meeting',
    descriptionHtml: null,
    location: null,
    locationUrl: null,
    imageUrl: null,
    startMs: 0,
    endMs: 0,
    isAllDay: false,
    timezone: 'UTC',
    recurrenceRule: null,
    reminderBefore: null,
    busyType: null,
    sequence: 0,
    updatedMs: 0,
    pageUrl: PAGE,
    ...v,
  };
}

const EVENTS = {
  // 13:00-14:30 in New York in July (EDT): 17:00-18:30 UTC.
  timed: view({
    startMs: Date.parse('2026-07-14T17:00:00Z'),
    endMs: Date.parse('2026-07-14T18:30:00Z'),
    timezone: 'America/New_York',
    location: 'HQ, Room 4',
    descriptionHtml: '<p>Agenda</p>',
    busyType: 'busy',
  }),
  // All-day events are stored as their first and last (inclusive) days, as UTC midnights.
  'all-day': view({ title: 'Offsite', isAllDay: true, startMs: day('2026-04-14'), endMs: day('2026-04-14'), timezone: 'Europe/Amsterdam', busyType: 'free' }),
  'multi-day all-day': view({ title: 'Offsite', isAllDay: true, startMs: day('2026-04-14'), endMs: day('2026-04-16'), timezone: 'Europe/Amsterdam' }),
  recurring: view({
    title: 'Weekly sync',
    startMs: Date.parse('2026-07-14T17:00:00Z'),
    endMs: Date.parse('2026-07-14T18:00:00Z'),
    timezone: 'America/New_York',
    recurrenceRule: 'FREQ=WEEKLY;BYDAY=TU;COUNT=10',
  }),
  // 400 words, far more than fit: cut after the last whole word that fits, then `…`, a blank
  // line and a link to the page.
  'long description': view({
    title: 'Reading',
    startMs: Date.parse('2026-07-14T17:00:00Z'),
    endMs: Date.parse('2026-07-14T18:00:00Z'),
    timezone: 'America/New_York',
    descriptionHtml: `<p>${Array(400).fill('lorem').join(' ')}</p>`,
  }),
} satisfies Record<string, EventView>;

/** `count` words of the long description, encoded as in a URL. */
const words = (count: number) => Array(count).fill('lorem').join('%20');
const MORE = 'More%3A%20https%3A%2F%2Fcal.example%2Fe%2Fev1';

const EXPECTED: Record<keyof typeof EVENTS, Record<WebPlatform, string>> = {
  timed: {
    google:
      'https://calendar.google.com/calendar/render?action=TEMPLATE&text=Board%20meeting&dates=20260714T130000%2F20260714T143000&ctz=America%2FNew_York&location=HQ%2C%20Room%204&trp=true&crm=BUSY&details=Agenda',
    outlook_web:
      'https://outlook.live.com/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Board%20meeting&startdt=2026-07-14T17%3A00%3A00Z&enddt=2026-07-14T18%3A30%3A00Z&allday=false&location=HQ%2C%20Room%204&body=Agenda',
    office365:
      'https://outlook.cloud.microsoft/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Board%20meeting&startdt=2026-07-14T17%3A00%3A00Z&enddt=2026-07-14T18%3A30%3A00Z&allday=false&location=HQ%2C%20Room%204&body=Agenda',
    yahoo: 'https://calendar.yahoo.com/?v=60&TITLE=Board%20meeting&ST=20260714T130000&ET=20260714T143000&in_loc=HQ%2C%20Room%204&DESC=Agenda',
  },
  'all-day': {
    google: 'https://calendar.google.com/calendar/render?action=TEMPLATE&text=Offsite&dates=20260414%2F20260415&trp=false&crm=AVAILABLE',
    outlook_web: 'https://outlook.live.com/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Offsite&startdt=2026-04-14&enddt=2026-04-15&allday=true',
    office365: 'https://outlook.cloud.microsoft/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Offsite&startdt=2026-04-14&enddt=2026-04-15&allday=true',
    yahoo: 'https://calendar.yahoo.com/?v=60&TITLE=Offsite&ST=20260414&DUR=allday',
  },
  'multi-day all-day': {
    google: 'https://calendar.google.com/calendar/render?action=TEMPLATE&text=Offsite&dates=20260414%2F20260417',
    outlook_web: 'https://outlook.live.com/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Offsite&startdt=2026-04-14&enddt=2026-04-17&allday=true',
    office365: 'https://outlook.cloud.microsoft/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Offsite&startdt=2026-04-14&enddt=2026-04-17&allday=true',
    yahoo: 'https://calendar.yahoo.com/?v=60&TITLE=Offsite&ST=20260414&ET=20260417',
  },
  recurring: {
    google:
      'https://calendar.google.com/calendar/render?action=TEMPLATE&text=Weekly%20sync&dates=20260714T130000%2F20260714T140000&ctz=America%2FNew_York&recur=RRULE%3AFREQ%3DWEEKLY%3BBYDAY%3DTU%3BCOUNT%3D10',
    outlook_web:
      'https://outlook.live.com/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Weekly%20sync&startdt=2026-07-14T17%3A00%3A00Z&enddt=2026-07-14T18%3A00%3A00Z&allday=false&body=Repeats%20every%20week%20on%20Tuesday%2C%2010%20times.',
    office365:
      'https://outlook.cloud.microsoft/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Weekly%20sync&startdt=2026-07-14T17%3A00%3A00Z&enddt=2026-07-14T18%3A00%3A00Z&allday=false&body=Repeats%20every%20week%20on%20Tuesday%2C%2010%20times.',
    yahoo:
      'https://calendar.yahoo.com/?v=60&TITLE=Weekly%20sync&ST=20260714T130000&ET=20260714T140000&DESC=Repeats%20every%20week%20on%20Tuesday%2C%2010%20times.',
  },
  'long description': {
    google: `https://calendar.google.com/calendar/render?action=TEMPLATE&text=Reading&dates=20260714T130000%2F20260714T140000&ctz=America%2FNew_York&details=${words(224)}%E2%80%A6%0A%0A${MORE}`,
    outlook_web: `https://outlook.live.com/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Reading&startdt=2026-07-14T17%3A00%3A00Z&enddt=2026-07-14T18%3A00%3A00Z&allday=false&body=${words(216)}%E2%80%A6%3Cbr%3E%3Cbr%3E${MORE}`,
    office365: `https://outlook.cloud.microsoft/calendar/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject=Reading&startdt=2026-07-14T17%3A00%3A00Z&enddt=2026-07-14T18%3A00%3A00Z&allday=false&body=${words(216)}%E2%80%A6%3Cbr%3E%3Cbr%3E${MORE}`,
    yahoo: `https://calendar.yahoo.com/?v=60&TITLE=Reading&ST=20260714T130000&ET=20260714T140000&DESC=${words(231)}%E2%80%A6%0A%0A${MORE}`,
  },
};

const CASES = Object.entries(EXPECTED).flatMap(([kind, urls]) =>
  Object.entries(urls).map(([platform, url]) => [kind as keyof typeof EVENTS, platform as WebPlatform, url] as const),
);

describe('add-event URLs of every web platform', () => {
  it.each(CASES)('%s on %s', (kind, platform, url) => {
    expect(WEB_PLATFORMS[platform](EVENTS[kind])).toBe(url);
  });

  it.each(Object.entries(EXPECTED['long description']))('the long description on %s keeps as many words as fit', (_, url) => {
    // One more word (`%20lorem`) would not fit.
    expect(url.length).toBeLessThanOrEqual(MAX_URL);
    expect(url.length + '%20lorem'.length).toBeGreaterThan(MAX_URL);
  });

  it('has a row for every platform that is a web link (the others are .ics files)', () => {
    const files = ['apple', 'outlook', 'ics'];
    expect(PLATFORMS.map((p) => p.key).filter((k) => !files.includes(k)).sort()).toEqual(Object.keys(WEB_PLATFORMS).sort());
    for (const urls of Object.values(EXPECTED)) expect(Object.keys(urls).sort()).toEqual(Object.keys(WEB_PLATFORMS).sort());
  });
});

describe('the words a link adds, in the visitor\'s language', () => {
  const desc = (url: string) => new URL(url).searchParams.get('DESC');
  it.each([
    ['de', 'Wiederholung: jede Woche am Dienstag, 10-mal.'],
    ['fr', 'Répétition : toutes les semaines, le mardi, 10 fois.'],
    ['ja', '繰り返し: 毎週（火曜日）、10回。'],
    ['en', 'Repeats every week on Tuesday, 10 times.'],
  ] as const)('the rule in words in %s', (locale, words) => {
    expect(desc(WEB_PLATFORMS.yahoo(EVENTS.recurring, linkTexts(locale)))).toBe(words);
    expect(new URL(WEB_PLATFORMS.outlook_web(EVENTS.recurring, linkTexts(locale))).searchParams.get('body')).toBe(words);
  });

  it('the link back to the page after a cut description', () => {
    // "Mehr" is as long as "More": the same words fit.
    expect(WEB_PLATFORMS.yahoo(EVENTS['long description'], linkTexts('de'))).toBe(EXPECTED['long description'].yahoo.replace(MORE, 'Mehr%3A%20https%3A%2F%2Fcal.example%2Fe%2Fev1'));
    const details = new URL(WEB_PLATFORMS.google(view({ descriptionHtml: `<p>${'x '.repeat(3000)}</p>` }), linkTexts('ja'))).searchParams.get('details');
    expect(details?.endsWith(`…\n\n詳細: ${PAGE}`)).toBe(true);
  });

  it('is English when no language is given', () => {
    expect(WEB_PLATFORMS.yahoo(EVENTS.recurring)).toBe(EXPECTED.recurring.yahoo);
  });
});
