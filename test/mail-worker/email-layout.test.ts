import fs from 'node:fs';
import path from 'node:path';
import { type ParsedMail, simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import type { Browser, Page } from 'playwright-core';
import { PLATFORMS } from '../../shared/calendar/platforms';
import { MAIL_KINDS, type EventSnapshot, type MailJob, type MailKind, type MailMessage } from '../../shared/queues/mail.job';
import { messageFactory } from '../../services/mail-worker/message.builder';
import type { Locale } from '../../shared/i18n/translations';
import { launchChromium } from '../helpers/browser';
import { ROOT } from '../helpers/processes';

/**
 * Every kind of message as a reader gets it: built by the mail worker's builder, parsed
 * from its MIME by mailparser as a mail client would, and its HTML shown in Chromium on a
 * phone (375 px) and a desktop (1280 px). Screenshots go to test-artifacts/emails/.
 */
const SHOTS = path.join(ROOT, 'test-artifacts', 'emails');
const BASE = 'https://cal.example.com';
const UID = 'AbCdEfGh12345678';
const QUERY = '?expires=1798761600&signature=3f9a0c1b2d4e5f60718293a4b5c6d7e8f90a1b2c';
const PAGE = `${BASE}/e/${UID}${QUERY}`;
const MEETING = 'https://meet.example.test/q3-review-northern-europe?pwd=abcdefghijklmnopqrstuvwxyz0123456789abcdefghij';
const TITLE = 'Quarterly planning & <review> of the "Northern Europe" regional sales team <img src=x onerror="window.hacked=1">, part two';
const ANSWER_URL = `${BASE}/e/${UID}/rsvp/change?token=tok_9f8e7d6c5b4a`;
const LINKS = {
  answer: { yes: `${BASE}/a/ans_yes_123?sig=aa`, maybe: `${BASE}/a/ans_maybe_123?sig=bb`, no: `${BASE}/a/ans_no_123?sig=cc` },
  unsubscribe: `${BASE}/u/unsub_456?sig=dd`,
};

const event = (overrides: Partial<EventSnapshot> = {}): EventSnapshot => ({
  uid: UID,
  uidHost: 'cal.example.com',
  sequence: 3,
  title: TITLE,
  descriptionHtml:
    '<h1>Agenda for the day</h1><p>Bring <strong>your numbers</strong> &amp; a laptop.</p><h2>Before you come</h2><ul><li>Read the Q2 report</li><li>Fill in the survey</li></ul>',
  location: MEETING,
  url: PAGE,
  startMs: Date.parse('2027-01-12T14:00:00Z'),
  endMs: Date.parse('2027-01-12T15:00:00Z'),
  isAllDay: false,
  timezone: 'Europe/Paris',
  recurrenceRule: 'FREQ=WEEKLY;BYDAY=TU;COUNT=10',
  reminderBefore: 30,
  busyType: 'busy',
  updatedMs: Date.parse('2026-11-01T00:00:00Z'),
  createdMs: Date.parse('2026-10-01T00:00:00Z'),
  stampMs: Date.parse('2026-11-19T08:30:00Z'),
  organizer: { name: 'Dana <Ops> Müller', email: 'dana@example.com' },
  ...overrides,
});
const from = { header: 'Team Calendar <calendar@example.com>', mailbox: { name: 'Team Calendar', email: 'calendar@example.com' } };
const NO_BUTTON_ROW: MailKind[] = ['cancellation', 'removal', 'rsvp_no', 'rsvp_link'];

async function mail(kind: MailKind, e = event(), message: Partial<MailMessage> = { links: LINKS }, locale?: Locale): Promise<ParsedMail> {
  const job: MailJob = {
    eventId: 1,
    kind,
    ...(locale ? { locale } : {}),
    event: e,
    messages: [{ deliveryId: 9, to: { email: 'ann@example.test', name: 'Ann Lee' }, ...message }],
    ...(kind.startsWith('rsvp_') ? { answerUrl: ANSWER_URL } : {}),
  };
  const build = await messageFactory(job, from, Date.parse('2026-11-20T12:00:00Z'));
  const info = await nodemailer.createTransport({ streamTransport: true, buffer: true }).sendMail(build(job.messages[0]));
  return simpleParser(info.message as Buffer);
}

/** A header line unfolded, as received. */
const header = (parsed: ParsedMail, name: string) => parsed.headerLines.find((h) => h.key === name)?.line.replace(/\r?\n[ \t]+/g, ' ').replace(': ', ': ').replace(/:\s+/, ': ');

let browser: Browser;
beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium();
}, 60_000);
afterAll(() => browser?.close());

/** The HTML as a mail client shows it: nothing may be fetched from anywhere. */
async function show(html: string, width: number) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, javaScriptEnabled: false });
  const page = await context.newPage();
  const fetched: string[] = [];
  await page.route('**/*', (route) => {
    fetched.push(route.request().url());
    return route.abort();
  });
  await page.setContent(html, { waitUntil: 'load' });
  return { page, fetched, close: () => context.close() };
}

// The two functions below run in the page (the project's types have no DOM: they go as text).

/** The box around everything a reader sees: every piece of text and every link. */
const contentBox = (page: Page) =>
  page.evaluate<{ left: number; right: number }>(`(() => {
    const rects = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      rects.push(...range.getClientRects());
    }
    for (const a of document.querySelectorAll('a')) rects.push(a.getBoundingClientRect());
    const seen = rects.filter((r) => r.width > 0 && r.height > 0);
    return { left: Math.min(...seen.map((r) => r.left)), right: Math.max(...seen.map((r) => r.right)) };
  })()`);

interface PageFacts {
  hrefs: string[];
  links: Array<{ text: string; href: string }>;
  title: { text: string; size: number; struck: boolean };
  descriptionHeadings: Array<{ text: string; size: number }>;
  images: number;
  text: string;
  scrollWidth: number;
  viewport: number;
}

const pageFacts = (page: Page) =>
  page.evaluate<PageFacts>(`(() => {
    const headings = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')];
    const size = (el) => parseFloat(getComputedStyle(el).fontSize);
    const [title, ...inDescription] = headings;
    const struck = (el) => !!el && (getComputedStyle(el).textDecorationLine.includes('line-through') || struck(el.firstElementChild));
    const anchors = [...document.querySelectorAll('a[href]')];
    return {
      hrefs: anchors.map((a) => a.getAttribute('href')),
      links: anchors.map((a) => ({ text: a.innerText.trim(), href: a.getAttribute('href') })),
      title: { text: title.textContent, size: size(title), struck: struck(title) },
      descriptionHeadings: inDescription.map((h) => ({ text: h.textContent, size: size(h) })),
      images: document.images.length,
      text: document.body.innerText,
      scrollWidth: document.scrollingElement.scrollWidth,
      viewport: window.innerWidth,
    };
  })()`);

/** On a desktop, what a reader sees stays within the 600 px card; on a phone, nothing scrolls sideways. */
async function expectFits(page: Page, facts: PageFacts, width: number): Promise<void> {
  if (width === 1280) {
    const box = await contentBox(page);
    expect(box.right - box.left).toBeLessThanOrEqual(600);
  } else {
    expect(facts.scrollWidth).toBeLessThanOrEqual(facts.viewport);
  }
}

describe('email layout in a real mail parser and browser', () => {
  it.each(MAIL_KINDS.map((k) => [k]))('%s: fits a phone and a desktop, links only where it should, escapes what it shows', async (kind) => {
    const parsed = await mail(kind);
    const html = parsed.html as string;
    expect(html).toBeTruthy();
    // A reminder's link stops that event's reminders; every other message's, all the team's email.
    const stopLabel = kind === 'reminder' ? 'Stop reminders for this event' : 'Stop all email from this organizer';
    // One-click unsubscribe (RFC 8058), as the raw header lines a mail client reads.
    expect(header(parsed, 'list-unsubscribe')).toBe(`List-Unsubscribe: <${LINKS.unsubscribe}>`);
    expect(header(parsed, 'list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');

    const ourRoutes = new Set([PAGE, ...PLATFORMS.map((p) => `${BASE}/e/${UID}/${p.key}${QUERY}`), LINKS.answer.yes, LINKS.answer.maybe, LINKS.answer.no, LINKS.unsubscribe, ANSWER_URL]);
    const outside = new Set([MEETING]);

    for (const width of [375, 1280]) {
      const { page, fetched, close } = await show(html, width);
      try {
        const facts = await pageFacts(page);
        await page.screenshot({ path: path.join(SHOTS, `${kind}-${width}.png`), fullPage: true });
        expect(fetched).toEqual([]);
        // Escaped: the title reads as typed, and its markup made no element.
        expect(facts.title.text).toBe(TITLE);
        expect(facts.images).toBe(0);
        expect(facts.text).toContain('Organized by Dana <Ops> Müller');
        expect(facts.title.struck).toBe(kind === 'cancellation');
        // The description's headings are quieter than the title.
        expect(facts.descriptionHeadings.map((h) => h.text)).toEqual(['Agenda for the day', 'Before you come']);
        for (const h of facts.descriptionHeadings) expect(h.size).toBeLessThan(facts.title.size);
        expect(facts.text).toMatch(/When\s+Tue 12 Jan 2027, 15:00–16:00 \(Europe\/Paris, UTC\+01:00\)/);
        expect(facts.text).toMatch(/Repeats\s+every week on Tuesday, 10 times/);
        for (const href of facts.hrefs) expect(ourRoutes.has(href) || outside.has(href) ? href : `unexpected link ${href}`).toBe(href);
        expect(facts.hrefs).toContain(MEETING);

        const labels = facts.links.map((l) => l.text);
        const buttonRow = !NO_BUTTON_ROW.includes(kind);
        for (const p of PLATFORMS) {
          if (buttonRow) expect(facts.links).toContainEqual({ text: p.label, href: `${BASE}/e/${UID}/${p.key}${QUERY}` });
          else expect(labels).not.toContain(p.label);
        }
        const answers = kind !== 'cancellation' && kind !== 'removal';
        expect(facts.text.includes('Will you attend?')).toBe(answers);
        if (answers) {
          expect(facts.links).toEqual(expect.arrayContaining([
            { text: 'Yes', href: LINKS.answer.yes },
            { text: 'Maybe', href: LINKS.answer.maybe },
            { text: 'No', href: LINKS.answer.no },
          ]));
        }
        expect(facts.links).toContainEqual({ text: stopLabel, href: LINKS.unsubscribe });
        expect(labels.includes('Change your answer')).toBe(kind.startsWith('rsvp_'));
        expect(labels.includes('Open the event page')).toBe(!['cancellation', 'removal', 'rsvp_link'].includes(kind));
        expect(facts.text).toMatch(/You received this because /);

        await expectFits(page, facts, width);
      } finally {
        await close();
      }
    }

    // The text part carries the same facts and links.
    const text = parsed.text as string;
    expect(text).toContain(TITLE);
    expect(text).toContain('When: Tue 12 Jan 2027, 15:00–16:00 (Europe/Paris, UTC+01:00)');
    expect(text).toContain(`Where: ${MEETING}`);
    expect(text).toContain(`${stopLabel}: ${LINKS.unsubscribe}`);
    if (!NO_BUTTON_ROW.includes(kind)) expect(text).toContain(`Google: ${BASE}/e/${UID}/google${QUERY}`);
    if (kind !== 'cancellation' && kind !== 'removal') expect(text).toContain(`Yes: ${LINKS.answer.yes}`);
  });

  it('gives the reminder a subject and lead of its own', async () => {
    const parsed = await mail('reminder');
    expect(parsed.subject).toBe(`Reminder: ${TITLE} @ Tue Jan 12, 2027 3:00 PM - 4:00 PM (CET)`);
    expect(parsed.text).toMatch(/^Coming up:\n\n/);
    expect(parsed.text).toContain(`You received this because you are going to ${TITLE}.`);
    expect(parsed.attachments).toEqual([]);
  });

  it('links an address to a map search, and leaves out what the event does not have', async () => {
    const parsed = await mail('invitation', event({ location: 'Kulturbrauerei\nSchönhauser Allee 36, Berlin', url: null, descriptionHtml: null, recurrenceRule: null }), {});
    const map = 'https://www.openstreetmap.org/search?query=Kulturbrauerei%2C%20Sch%C3%B6nhauser%20Allee%2036%2C%20Berlin';
    expect(header(parsed, 'list-unsubscribe')).toBeUndefined();
    const { page, close } = await show(parsed.html as string, 375);
    try {
      const facts = await pageFacts(page);
      await page.screenshot({ path: path.join(SHOTS, 'invitation-address-375.png'), fullPage: true });
      expect(facts.links).toEqual([{ text: 'Kulturbrauerei\nSchönhauser Allee 36, Berlin', href: map }]);
      expect(facts.text).not.toContain('Repeats');
      expect(facts.text).not.toContain('Add to calendar');
      expect(facts.text).not.toContain('Will you attend?');
    } finally {
      await close();
    }
    expect(parsed.text).toContain(`Where: Kulturbrauerei\n  Schönhauser Allee 36, Berlin\n  Map: ${map}`);
    expect(parsed.text).not.toContain('Event page');
  });

  it('writes all-day events and events across a change of offset plainly', async () => {
    const allDay = await mail('invitation', event({ isAllDay: true, startMs: Date.parse('2026-04-14T00:00:00Z'), endMs: Date.parse('2026-04-16T00:00:00Z') }));
    expect(allDay.text).toContain('When: Tue 14 Apr 2026 – Thu 16 Apr 2026 (all day)');
    const overnight = await mail('invitation', event({ startMs: Date.parse('2026-03-28T22:00:00Z'), endMs: Date.parse('2026-03-29T03:00:00Z') }));
    expect(overnight.text).toContain('When: Sat 28 Mar 2026, 23:00 – Sun 29 Mar 2026, 05:00 (Europe/Paris, UTC+01:00 → UTC+02:00)');
  });

  // German has the longest words of the languages, Japanese its own script: both still fit a
  // phone and a 600 px card, in the language's own words.
  it.each([
    ['de', 'Einladung', 'Kommen Sie?'],
    ['ja', '招待', '参加しますか？'],
  ] as Array<[Locale, string, string]>)('%s: an invitation fits a phone and a desktop in its language', async (locale, subject, ask) => {
    const parsed = await mail('invitation', event(), { links: LINKS }, locale);
    expect(parsed.subject?.startsWith(subject)).toBe(true);
    for (const width of [375, 1280]) {
      const { page, fetched, close } = await show(parsed.html as string, width);
      try {
        const facts = await pageFacts(page);
        await page.screenshot({ path: path.join(SHOTS, `invitation-${locale}-${width}.png`), fullPage: true });
        expect(fetched).toEqual([]);
        expect(await page.getAttribute('html', 'lang')).toBe(locale);
        expect(facts.text).toContain(ask);
        expect(facts.title.text).toBe(TITLE);
        await expectFits(page, facts, width);
      } finally {
        await close();
      }
    }
  });
});
