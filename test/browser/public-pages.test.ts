import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { type BrowserContextOptions, type Page } from 'playwright-core';
import { emailedAnswerKey } from '../helpers/answer-keys';
import { launchChromium } from '../helpers/browser';
import { ROOT } from '../helpers/processes';
import { startGateway, type TestGateway } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';

/**
 * The public pages as a person sees them, in a real browser (Debian's Chromium, headless,
 * driven by playwright-core). Screenshots are kept in test-artifacts/.
 */
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
/** Each page at a phone's width and a desktop's. */
const PAGE_SHOTS = path.join(ARTIFACTS, 'pages');
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  fs.mkdirSync(PAGE_SHOTS, { recursive: true });
  // A queue of its own: an answer's key is read from the mail job that carries it.
  gw = await startGateway({ QUEUE_PREFIX: isolatedPrefix('public_pages') });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

async function openPhonePage(url: string) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const page = await context.newPage();
  const outside: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(gw.baseUrl)) outside.push(r.url());
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  const response = await page.goto(url);
  return { page, context, response, outside, problems };
}

describe('public pages in a real browser', () => {
  it('the event page shows the event and one working button per platform, on a phone', async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Launches', timezone: 'Europe/Berlin' })).body.data;
    const created = await team.api.post(`/api/calendars/${cal.public_id}/events`, {
      title: 'Product launch <script>alert(1)</script>',
      date_start: '2026-09-17 18:30',
      date_end: '2026-09-17 21:00',
      timezone: 'Europe/Berlin',
      location: 'Kulturbrauerei, Schönhauser Allee 36, Berlin',
      description: 'Doors open at 18:00.\n\nDrinks and a demo of everything new.',
      recurrence_rule: 'FREQ=MONTHLY;COUNT=3',
    });
    const { data, links } = created.body;
    const { page, context, response, outside, problems } = await openPhonePage(data.public_url);
    try {
      expect(response?.status()).toBe(200);
      await expect(page.title()).resolves.toBe('Product launch <script>alert(1)</script>');
      await expect(page.locator('h1').textContent()).resolves.toBe('Product launch <script>alert(1)</script>');
      const text = await page.locator('article').innerText();
      expect(text).toContain('Thu Sep 17, 2026 6:30 PM - 9:00 PM (CEST) (Europe/Berlin, GMT+02:00)');
      expect(text).toContain('Kulturbrauerei, Schönhauser Allee 36, Berlin');
      expect(text).toContain('Drinks and a demo of everything new.');
      expect(text).toContain('every month, 3 times');

      // One control; its list opens on a click and holds every platform.
      await expect(page.locator('details.atc').count()).resolves.toBe(1);
      const summary = page.locator('details.atc > summary');
      await expect(summary.textContent()).resolves.toBe('Add to calendar');
      await summary.click();
      const entries = page.locator('details.atc a');
      const targets: Array<[string | null, string | null]> = [];
      for (let i = 0; i < (await entries.count()); i++) targets.push([await entries.nth(i).locator('span').evaluate((e) => e.firstChild?.textContent ?? null), await entries.nth(i).getAttribute('href')]);
      // Headless Chromium's User-Agent is a bot's: no likely platform, the usual order.
      expect(targets).toEqual([
        ['Apple Calendar', links.apple],
        ['Google Calendar', links.google],
        ['Outlook (desktop)', links.outlook],
        ['Office 365', links.office365],
        ['Outlook.com', links.outlook_web],
        ['Yahoo Calendar', links.yahoo],
        ['Download .ics', links.ics],
      ]);
      // every entry answers: a download or a redirect to the platform
      for (const [, href] of targets) {
        const res = await fetch(href as string, { redirect: 'manual' });
        expect([200, 302]).toContain(res.status);
      }
      // readable on a phone: nothing wider than the screen, entries large enough to tap
      await expect(page.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(390);
      for (const target of [summary, entries.first()]) expect((await target.boundingBox())?.height).toBeGreaterThanOrEqual(40);
      expect(outside).toEqual([]);
      expect(problems).toEqual([]);
      await page.screenshot({ path: path.join(ARTIFACTS, 'event-page.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('the calendar page lists upcoming events with their buttons and the subscribe buttons', async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Community meetups', timezone: 'America/Chicago', description: 'Every meetup of the year.' })).body.data;
    for (const [title, start] of [
      ['Rust night', '2030-02-03 18:00'],
      ['TypeScript talks', '2030-03-03 18:00'],
    ]) {
      await team.api.post(`/api/calendars/${cal.public_id}/events`, { title, date_start: start, date_end: start.replace('18:00', '20:00'), timezone: 'America/Chicago' });
    }
    const { page, context, outside, problems } = await openPhonePage(cal.public_url);
    try {
      await expect(page.locator('h1').first().textContent()).resolves.toBe('Community meetups');
      await expect(page.locator('ul.events li h3').allTextContents()).resolves.toEqual(['Rust night', 'TypeScript talks']);
      // grouped by month, one control per event
      await expect(page.locator('h3.month').allTextContents()).resolves.toEqual(['February 2030', 'March 2030']);
      await expect(page.locator('ul.events details.atc').count()).resolves.toBe(2);
      const subscribeLinks = page.locator('ul[aria-label="Subscribe"] a');
      const subscribe: string[] = [];
      for (let i = 0; i < (await subscribeLinks.count()); i++) subscribe.push((await subscribeLinks.nth(i).getAttribute('href')) as string);
      const feed = `${cal.public_url}.ics`;
      expect(subscribe).toEqual(['apple', 'google', 'outlook_web', 'office365', 'ics'].map((p) => `${cal.public_url}/subscribe/${p}`));
      // each opens a page whose button (a POST) goes to its platform with a personal feed address
      const targets = [];
      for (const href of subscribe) targets.push((await fetch(href, { method: 'POST', redirect: 'manual', headers: { 'User-Agent': BROWSER_UA } })).headers.get('location') as string);
      expect(targets[0]).toMatch(/^webcal:\/\/127\.0\.0\.1:\d+\/c\/\w+\/feeds\/\w{32}\.ics$/);
      expect(targets[1]).toMatch(/^https:\/\/calendar\.google\.com\/calendar\/render\?cid=webcal/);
      expect(targets[2]).toMatch(/^https:\/\/outlook\.live\.com\/calendar\/0\/addfromweb\?url=/);
      expect(targets[3]).toMatch(/^https:\/\/outlook\.cloud\.microsoft\/calendar\/0\/addfromweb\?url=/);
      expect(targets[4]).toMatch(/\/feeds\/\w{32}\.ics$/);
      const feedText = await fetch(feed).then((r) => r.text());
      expect(feedText.match(/BEGIN:VEVENT/g)).toHaveLength(2);
      await expect(page.locator('ul.events li').first().locator('details.atc a').count()).resolves.toBe(7);
      await expect(page.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(390);
      expect(outside).toEqual([]);
      expect(problems).toEqual([]);
      await page.screenshot({ path: path.join(ARTIFACTS, 'calendar-page.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('the subscribe page: opening it records nothing; its one button subscribes', async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Community meetups', timezone: 'UTC' })).body.data;
    // A person's browser (headless Chromium says it is one, and bots are sent to the public feed).
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, userAgent: BROWSER_UA });
    const page = await context.newPage();
    const outside: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(gw.baseUrl)) outside.push(r.url());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${cal.public_url}/subscribe/google`);
    try {
      await expect(page.locator('h1').textContent()).resolves.toBe('Subscribe to Community meetups');
      await expect(page.locator('form[method="post"] button[type="submit"]').count()).resolves.toBe(1);
      await expect(page.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(390);
      await page.screenshot({ path: path.join(ARTIFACTS, 'subscribe-page-phone.png'), fullPage: true });
      expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data).toHaveLength(0);
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.screenshot({ path: path.join(ARTIFACTS, 'subscribe-page-desktop.png') });
      // The button: a POST whose 303 the browser follows to Google with the personal feed (the
      // page's form-action lets it: a browser applies it to the redirect too). No network here:
      // that the request to Google is made is what counts.
      const [google] = await Promise.all([page.waitForRequest(/^https:\/\/calendar\.google\.com\//), page.locator('button[type="submit"]').click()]);
      expect(decodeURIComponent(google.url())).toMatch(/cid=webcal:\/\/127\.0\.0\.1:\d+\/c\/\w+\/feeds\/\w{32}\.ics/);
      expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data).toHaveLength(1);
      expect(outside.every((url) => url.startsWith('https://calendar.google.com/'))).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('html_snippets render as working links when pasted into a plain page', async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Snippets', timezone: 'UTC' })).body.data;
    const created = await team.api.post(`/api/calendars/${cal.public_id}/events?with_html=true`, {
      title: 'Launch "party" <b>now</b>',
      date_start: '2030-06-01 18:00',
      date_end: '2030-06-01 20:00',
      timezone: 'UTC',
    });
    const snippets: Record<string, string> = created.body.html_snippets;
    const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
    const page = await context.newPage();
    try {
      const variants = Object.entries(snippets);
      await page.setContent(`<!doctype html><html><body>${variants.map(([k, v]) => `<section id="${k}">${v}</section>`).join('\n')}</body></html>`);
      for (const [variant] of variants) {
        const anchors = page.locator(`#${variant} a`);
        const count = await anchors.count();
        // the iframe variant holds the widget, whose links are in its own document (below)
        expect(count).toBe(variant === 'single-button' ? 1 : variant === 'iframe' ? 0 : 7);
        for (let i = 0; i < count; i++) {
          const box = await anchors.nth(i).boundingBox();
          expect(box && box.width > 0 && box.height > 0).toBe(true);
          const href = (await anchors.nth(i).getAttribute('href')) as string;
          expect(href.startsWith(created.body.data.public_url)).toBe(true);
        }
      }
      // the title stays text: no <b> element was made from it
      await expect(page.locator('section b').count()).resolves.toBe(0);
      await page.screenshot({ path: path.join(ARTIFACTS, 'snippets.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it("a form on another site posts to a smart link with fetch() and reads the answer", async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Bookings', timezone: 'UTC' })).body.data;
    const link = (await team.api.post('/api/smart-links', { name: 'Shop form', calendar: cal.public_id })).body.data as { url: string };
    // The shop's page, on an origin of its own.
    const shop = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>Shop</title>'));
    await new Promise<void>((resolve) => {
      shop.listen(0, '127.0.0.1', resolve);
    });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${(shop.address() as { port: number }).port}/`);
      const answers = await page.evaluate(async (url) => {
        const post = async (body: object) => {
          // JSON and a custom header: the browser asks first (preflight), then posts.
          const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `order-${Math.random()}` }, body: JSON.stringify(body) });
          return { status: res.status, body: await res.json(), limit: res.headers.get('X-RateLimit-Limit') };
        };
        return [await post({ title: 'Fitting', start: '2030-06-01 10:00' }), await post({ title: 'Fitting' })];
      }, link.url);
      expect(answers[0]).toMatchObject({ status: 202, body: { data: { status: 'queued' } } });
      expect(answers[1]).toMatchObject({ status: 422, body: { errors: { start: ['The start field is required.'] } } });
    } finally {
      await context.close();
      shop.close();
    }
  });

  it("an RSVP is received, and changed from its email's link; another browser typing the address is told the same and changes nothing", async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Meetups', timezone: 'UTC' })).body.data;
    const { data } = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Meetup', date_start: '2030-05-02 18:00', date_end: '2030-05-02 20:00', timezone: 'UTC', has_rsvp: true })).body;
    const mine = await openPhonePage(data.public_url);
    const other = await openPhonePage(data.public_url);
    await other.page.setViewportSize({ width: 1280, height: 800 });
    const notice = (page: Page) => page.locator('p[role=status]').first().textContent();
    const received =
      'Thanks, your answer was received. Check your email: a link to change your answer is sent to the address you gave (for a yes or maybe, with the event for your calendar). If that address had answered before, its earlier answer stays until that link is used.';
    try {
      await mine.page.fill('#rsvp-name', 'Ada');
      await mine.page.fill('#rsvp-email', 'ada@example.com');
      await mine.page.click('form[action$="/rsvp"] button[type=submit]');
      await mine.page.waitForURL(`${data.public_url}?rsvp=received`);
      await expect(notice(mine.page)).resolves.toBe(received);
      // No key in this browser: the form starts empty again.
      await expect(mine.page.locator('#rsvp-email').inputValue()).resolves.toBe('');
      await mine.page.screenshot({ path: path.join(ARTIFACTS, 'rsvp-received-390.png'), fullPage: true });

      // Someone else, typing the same address, changes nothing, and is told just the same.
      await other.page.fill('#rsvp-name', 'Not Ada');
      await other.page.fill('#rsvp-email', 'ada@example.com');
      await other.page.check('input[name=answer][value=no]');
      await other.page.click('form[action$="/rsvp"] button[type=submit]');
      await other.page.waitForURL(`${data.public_url}?rsvp=received`);
      await expect(notice(other.page)).resolves.toBe(received);
      await other.page.screenshot({ path: path.join(ARTIFACTS, 'rsvp-received-1280.png'), fullPage: true });

      // Ada opens the link of her confirmation email: the page shows her answer, and the form starts from it.
      await mine.page.goto(`${data.public_url}/rsvp?key=${await emailedAnswerKey(gw, data.uid, 'ada@example.com')}`);
      await expect(mine.page.locator('#rsvp-title + p + p').textContent()).resolves.toBe('Your answer: Yes (Ada, ada@example.com). You can change it here.');
      await expect(mine.page.locator('#rsvp-email').inputValue()).resolves.toBe('ada@example.com');
      await mine.page.check('input[name=answer][value=maybe]');
      await mine.page.click('form[action$="/rsvp"] button[type=submit]');
      await mine.page.waitForURL(`${data.public_url}?rsvp=thanks`);
      await expect(notice(mine.page)).resolves.toContain('Thanks, your answer is saved.');
      await expect(mine.page.locator('input[name=answer][value=maybe]').isChecked()).resolves.toBe(true);
      await mine.page.screenshot({ path: path.join(ARTIFACTS, 'rsvp-changed.png'), fullPage: true });
      const rsvps = (await team.api.get(`/api/calendars/${cal.public_id}/events/${data.public_id}/rsvps`)).body.data;
      expect(rsvps.map((r: { name: string; answer: string }) => [r.name, r.answer])).toEqual([['Ada', 'maybe']]);
    } finally {
      await mine.context.close();
      await other.context.close();
    }
  });

  it('a protected event shows the access-code form; the right code opens it', async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Private', timezone: 'UTC' })).body.data;
    const { data } = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Board dinner', date_start: '2030-05-01 19:00', date_end: '2030-05-01 22:00', timezone: 'UTC', access_code: 'open-sesame' })).body;
    const { page, context, response } = await openPhonePage(data.public_url);
    try {
      expect(response?.status()).toBe(403);
      await expect(page.locator('h1').textContent()).resolves.toBe('This event is protected');
      await page.fill('#access_code', 'wrong-code');
      await page.click('button[type=submit]');
      await expect(page.locator('.error').textContent()).resolves.toBe('That access code is not right.');
      await page.fill('#access_code', 'open-sesame');
      await page.click('button[type=submit]');
      await page.waitForURL(data.public_url);
      await expect(page.locator('h1').textContent()).resolves.toBe('Board dinner');
      await page.screenshot({ path: path.join(ARTIFACTS, 'protected-unlocked.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });
});

const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';
const WINDOWS_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is (injected from node_modules). */
async function axeProblems(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>('axe.run(document)');
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** A page in its own context (a person's browser unless told otherwise), with what went wrong on it. */
async function open(url: string, options: BrowserContextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, userAgent: BROWSER_UA, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  const outside: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(gw.baseUrl) && !r.url().startsWith('data:')) outside.push(r.url());
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  const response = await page.goto(url);
  return { page, context, response, problems, outside };
}

/** Screenshots of a page at 390 and 1280 px, in test-artifacts/pages/. */
async function shoot(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(PAGE_SHOTS, `${name}-390.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: path.join(PAGE_SHOTS, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
}

/** Another site's page (its own origin), holding `body`: where embeds are pasted. */
async function hostPage(body: string): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><title>Host</title><body style="margin:0;background:#eef">${body}</body></html>`));
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve);
  });
  return { url: `http://localhost:${(server.address() as { port: number }).port}/`, close: () => server.close() };
}

const LONG_DESCRIPTION = Array.from({ length: 8 }, (_, i) => `<p>Part ${i + 1}: talks, demos and time to meet the team behind every release of the year.</p>`).join('');

describe('the Add-to-calendar control and the pages around it', () => {
  let team: Awaited<ReturnType<TestGateway['newTeam']>>;
  let cal: { public_id: string; uid: string; public_url: string };
  let event: { data: { uid: string; public_id: string; public_url: string }; links: Record<string, string> };

  beforeAll(async () => {
    team = await gw.newTeam();
    cal = (await team.api.post('/api/calendars', { name: 'Launches', timezone: 'Europe/Berlin', description: 'Every launch of the year.' })).body.data;
    event = (
      await team.api.post(`/api/calendars/${cal.public_id}/events`, {
        title: 'Launch </script><script>alert(1)</script> & "party"',
        date_start: '2031-09-17 18:30',
        date_end: '2031-09-17 21:00',
        timezone: 'Europe/Berlin',
        location: 'Kulturbrauerei, Schönhauser Allee 36, 10435 Berlin, Germany',
        description: LONG_DESCRIPTION,
        has_rsvp: true,
      })
    ).body;
  });

  it('is above the fold on a phone, opens without JavaScript, and lists the likely platform first', async () => {
    for (const [ua, first] of [
      [IPHONE_UA, 'apple'],
      [WINDOWS_UA, 'outlook'],
      [BROWSER_UA, 'google'],
    ] as const) {
      const { page, context, response } = await open(event.data.public_url, { javaScriptEnabled: false, userAgent: ua });
      try {
        expect(response?.headers().vary).toContain('User-Agent');
        const summary = page.locator('details.atc > summary');
        await expect(summary.count()).resolves.toBe(1);
        const box = await summary.boundingBox();
        expect(box && box.y + box.height).toBeLessThanOrEqual(844);
        await expect(page.locator('details.atc').getAttribute('open')).resolves.toBeNull();
        await summary.click();
        await expect(page.locator('details.atc').getAttribute('open')).resolves.toBe('');
        const links = page.locator('details.atc a');
        await expect(links.first().isVisible()).resolves.toBe(true);
        const hrefs: string[] = [];
        for (let i = 0; i < (await links.count()); i++) hrefs.push((await links.nth(i).getAttribute('href')) as string);
        expect(hrefs[0]).toBe(`${event.data.public_url}/${first}`);
        expect(hrefs.sort()).toEqual(['apple', 'google', 'ics', 'office365', 'outlook', 'outlook_web', 'yahoo'].map((k) => `${event.data.public_url}/${k}`));
        // each entry has its icon, drawn in the page
        await expect(links.locator('svg use').count()).resolves.toBe(7);
      } finally {
        await context.close();
      }
    }
  });

  it('is used with the keyboard alone, with a visible focus', async () => {
    const { page, context } = await open(event.data.public_url, { userAgent: IPHONE_UA });
    try {
      // Tab to the control: the title's page has no link before it but the location's.
      let focused = '';
      for (let i = 0; i < 5 && focused !== 'SUMMARY'; i++) {
        await page.keyboard.press('Tab');
        focused = await page.evaluate<string>("document.activeElement?.tagName ?? ''");
      }
      expect(focused).toBe('SUMMARY');
      const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
      expect(outline).toBe('solid');
      await page.keyboard.press('Enter');
      await expect(page.locator('details.atc').getAttribute('open')).resolves.toBe('');
      await page.keyboard.press('Tab');
      await expect(page.evaluate<string>('document.activeElement.href')).resolves.toBe(`${event.data.public_url}/apple`);
      // The RSVP form, by keyboard: name, email, answer, send.
      await page.focus('#rsvp-name');
      await page.keyboard.type('Ada');
      await page.keyboard.press('Tab');
      await page.keyboard.type('ada-keys@example.com');
      await page.keyboard.press('Tab');
      await page.keyboard.press('ArrowDown');
      await expect(page.locator('input[name=answer][value=maybe]').isChecked()).resolves.toBe(true);
      await page.keyboard.press('Tab');
      await expect(page.evaluate<string>('document.activeElement.textContent')).resolves.toBe('Send answer');
      await Promise.all([page.waitForURL(`${event.data.public_url}?rsvp=received`), page.keyboard.press('Enter')]);
    } finally {
      await context.close();
    }
  });

  it('has Open Graph tags, schema.org JSON-LD, a favicon, and a hostile title stays text', async () => {
    const { page, context, problems, outside } = await open(event.data.public_url);
    try {
      const title = 'Launch </script><script>alert(1)</script> & "party"';
      await expect(page.locator('h1').textContent()).resolves.toBe(title);
      // No script of the title's: only the JSON-LD data block and our own.
      await expect(page.locator('script').count()).resolves.toBe(2);
      const meta = (name: string) => page.locator(`meta[property="${name}"], meta[name="${name}"]`).getAttribute('content');
      await expect(meta('og:title')).resolves.toBe(title);
      await expect(meta('og:type')).resolves.toBe('event');
      await expect(meta('og:url')).resolves.toBe(event.data.public_url);
      await expect(meta('og:description')).resolves.toMatch(/^Wed Sep 17, 2031 6:30 PM - 9:00 PM \(CEST\) · Kulturbrauerei.*Part 1: talks/);
      await expect(meta('twitter:card')).resolves.toBe('summary');
      await expect(meta('twitter:title')).resolves.toBe(title);
      await expect(page.locator('link[rel=icon]').getAttribute('href')).resolves.toMatch(/^data:image\/svg\+xml,/);
      const ld = JSON.parse((await page.locator('script[type="application/ld+json"]').textContent()) as string);
      expect(ld).toMatchObject({
        '@context': 'https://schema.org',
        '@type': 'Event',
        name: title,
        startDate: '2031-09-17T18:30:00+02:00',
        endDate: '2031-09-17T21:00:00+02:00',
        eventStatus: 'https://schema.org/EventScheduled',
        eventAttendanceMode: 'https://schema.org/OfflineEventAttendanceMode',
        location: { '@type': 'Place', name: 'Kulturbrauerei, Schönhauser Allee 36, 10435 Berlin, Germany' },
        url: event.data.public_url,
      });
      expect(ld.description).toContain('Part 8');
      // The raw HTML: the title never closes the data block.
      const raw = await fetch(event.data.public_url).then((r) => r.text());
      expect(raw.match(/<\/script>/g)).toHaveLength(2);
      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("folds a long description, and shows the visitor's own time when it differs", async () => {
    const newYork = await open(event.data.public_url, { timezoneId: 'America/New_York' });
    const berlin = await open(event.data.public_url, { timezoneId: 'Europe/Paris' });
    try {
      await expect(newYork.page.locator('#local-time').isVisible()).resolves.toBe(true);
      await expect(newYork.page.locator('#local-time').innerText()).resolves.toMatch(/^Your time Wed, Sep 17, 2031, 12:30\s?[–-]\s?3:00\sPM EDT$/);
      // Paris keeps Berlin's clock: nothing more to say.
      await expect(berlin.page.locator('#local-time').isVisible()).resolves.toBe(false);
      // The description starts folded: its beginning, the rest a click away.
      const fold = newYork.page.locator('details.fold');
      await expect(newYork.page.locator('.preview').isVisible()).resolves.toBe(true);
      await expect(newYork.page.getByText('Part 8').isVisible()).resolves.toBe(false);
      await fold.locator('summary').click();
      await expect(newYork.page.getByText('Part 8').isVisible()).resolves.toBe(true);
      await expect(newYork.page.locator('.preview').isVisible()).resolves.toBe(false);
      expect(newYork.problems).toEqual([]);
      await shoot(newYork.page, 'event-open-description');
    } finally {
      await newYork.context.close();
      await berlin.context.close();
    }
    // All-day: dates only, in every zone.
    const allDay = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Offsite', is_all_day: true, date_start: '2031-04-14', date_end: '2031-04-16', timezone: 'Europe/Berlin' })).body.data;
    const tokyo = await open(allDay.public_url, { timezoneId: 'Asia/Tokyo' });
    try {
      await expect(tokyo.page.locator('#local-time').count()).resolves.toBe(0);
      await expect(tokyo.page.locator('script:not([type])').count()).resolves.toBe(0);
      const ld = JSON.parse((await tokyo.page.locator('script[type="application/ld+json"]').textContent()) as string);
      expect([ld.startDate, ld.endDate]).toEqual(['2031-04-14', '2031-04-16']);
    } finally {
      await tokyo.context.close();
    }
  });

  it('keeps the event page under 30 KB of HTML, styles and icons', async () => {
    const res = await fetch(event.data.public_url, { headers: { 'User-Agent': IPHONE_UA } });
    const bytes = Buffer.byteLength(await res.text());
    fs.writeFileSync(path.join(PAGE_SHOTS, 'event-page-bytes.txt'), `${bytes}\n`);
    expect(bytes).toBeLessThan(30 * 1024);
  });

  it('the embed fits a 300×200 frame and sizes itself through the iframe snippet', async () => {
    const snippet = (await team.api.get(`/api/calendars/${cal.public_id}/events/${event.data.public_id}?with_html=true`)).body.html_snippets.iframe as string;
    const context = await browser.newContext({ viewport: { width: 600, height: 600 }, userAgent: WINDOWS_UA });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    try {
      // The widget alone in a 300×200 frame: nothing cut off, the control visible.
      const fixedHost = await hostPage(`<iframe id="fixed" title="Add to calendar" src="${event.data.public_url}/embed" style="border:0;width:300px;height:200px"></iframe>`);
      await page.goto(fixedHost.url);
      fixedHost.close();
      const fixed = page.frameLocator('#fixed');
      await fixed.locator('details.atc > summary').waitFor();
      const frame = page.frames().find((f) => f.url().endsWith('/embed'));
      expect(frame).toBeDefined();
      await expect(frame?.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(300);
      await expect(frame?.evaluate<string>('getComputedStyle(document.body).backgroundColor')).resolves.toBe('rgba(0, 0, 0, 0)');
      await expect(frame?.evaluate<string>('getComputedStyle(document.body).margin')).resolves.toBe('0px');
      // The frame sits at the host page's top left: its boxes are the frame's own.
      const summaryBox = await frame?.locator('details.atc > summary').boundingBox();
      expect(summaryBox && summaryBox.x + summaryBox.width).toBeLessThanOrEqual(300);
      expect(summaryBox && summaryBox.y + summaryBox.height).toBeLessThanOrEqual(200);
      await expect(frame?.locator('details.atc a').first().getAttribute('href')).resolves.toBe(`${event.data.public_url}/outlook`);
      await page.screenshot({ path: path.join(PAGE_SHOTS, 'event-embed-300x200.png') });

      // The snippet: the frame takes the height the widget posts, and again when its control opens.
      const snippetHost = await hostPage(`<div style="width:300px">${snippet}</div>`);
      await page.goto(snippetHost.url);
      snippetHost.close();
      const sized = page.locator('iframe');
      await page.waitForFunction("document.querySelector('iframe').style.height !== '200px'");
      const closed = (await sized.boundingBox())?.height as number;
      const inner = page.frameLocator('iframe');
      await inner.locator('details.atc > summary').click();
      await page.waitForFunction(`document.querySelector('iframe').getBoundingClientRect().height > ${closed + 100}`);
      const opened = (await sized.boundingBox())?.height as number;
      const contentHeight = await page.frames()[1].evaluate<number>('document.body.getBoundingClientRect().height');
      expect(Math.abs(opened - contentHeight)).toBeLessThanOrEqual(1);
      await page.screenshot({ path: path.join(PAGE_SHOTS, 'event-embed-snippet.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the calendar page groups events by month, one control each, 50 to a page', async () => {
    const busy = (await team.api.post('/api/calendars', { name: 'Busy calendar', timezone: 'UTC' })).body.data;
    for (let i = 0; i < 52; i++) {
      const day = new Date(Date.UTC(2031, 0, 1 + i * 3)).toISOString().slice(0, 10);
      const res = await team.api.post(`/api/calendars/${busy.public_id}/events`, { title: `Meetup ${i + 1}`, date_start: `${day} 18:00`, date_end: `${day} 20:00`, timezone: 'UTC' });
      expect(res.status).toBe(200);
    }
    const { page, context, problems } = await open(busy.public_url, { userAgent: IPHONE_UA });
    try {
      await expect(page.locator('ul.events > li').count()).resolves.toBe(50);
      await expect(page.locator('details.atc').count()).resolves.toBe(50);
      await expect(page.locator('h3.month').first().textContent()).resolves.toBe('January 2031');
      // The subscribe block comes first.
      const subscribeTop = (await page.locator('ul[aria-label="Subscribe"]').boundingBox())?.y as number;
      expect(subscribeTop).toBeLessThan((await page.locator('h3.month').first().boundingBox())?.y as number);
      await expect(page.locator('details.atc').first().locator('a').first().getAttribute('href')).resolves.toMatch(/\/apple$/);
      await page.locator('a[rel=next]').click();
      await page.waitForURL(`${busy.public_url}?page=2`);
      await expect(page.locator('ul.events h3').allTextContents()).resolves.toEqual(['Meetup 51', 'Meetup 52']);
      await expect(page.locator('a[rel=next]').count()).resolves.toBe(0);
      await expect(page.locator('a[rel=prev]').getAttribute('href')).resolves.toBe(busy.public_url);
      expect((await fetch(`${busy.public_url}?page=0`)).status).toBe(422);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the calendar embed fits a 300×200 frame', async () => {
    const context = await browser.newContext({ viewport: { width: 600, height: 400 }, userAgent: BROWSER_UA });
    const page = await context.newPage();
    try {
      const host = await hostPage(`<iframe title="Launches" src="${cal.public_url}/embed" style="border:0;width:300px;height:200px"></iframe>`);
      await page.goto(host.url);
      host.close();
      await page.frameLocator('iframe').locator('details.atc > summary').first().waitFor();
      const frame = page.frames()[1];
      await expect(frame.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(300);
      const box = await frame.locator('details.atc > summary').first().boundingBox();
      expect(box && box.x + box.width).toBeLessThanOrEqual(300);
      expect(box && box.y + box.height).toBeLessThanOrEqual(200);
      await page.screenshot({ path: path.join(PAGE_SHOTS, 'calendar-embed-300x200.png') });
    } finally {
      await context.close();
    }
  });

  it('has no serious or critical accessibility problems (axe-core), and screenshots of each page', async () => {
    const full = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Small dinner', date_start: '2031-10-01 19:00', date_end: '2031-10-01 22:00', timezone: 'Europe/Berlin', has_rsvp: true, rsvp_limit: 1 })).body.data;
    expect((await fetch(`${full.public_url}/rsvp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ name: 'Bo', email: 'bo@example.com', answer: 'yes' }) })).status).toBe(202);
    const locked = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Board dinner', date_start: '2031-05-01 19:00', date_end: '2031-05-01 22:00', timezone: 'UTC', access_code: 'open-sesame' })).body.data;
    const pages: Array<[string, string]> = [
      ['event', event.data.public_url],
      ['event-rsvp-received', `${event.data.public_url}?rsvp=received`],
      ['locked', locked.public_url],
      ['rsvp-full', full.public_url],
      ['calendar', cal.public_url],
      ['event-embed', `${event.data.public_url}/embed`],
      ['calendar-embed', `${cal.public_url}/embed`],
      ['landing', `${gw.baseUrl}/`],
      // In other languages: the longest words, and a script of its own.
      ['event-de', `${event.data.public_url}?lang=de`],
      ['locked-ja', `${locked.public_url}?lang=ja`],
      ['subscribe-fr', `${cal.public_url}/subscribe/google?lang=fr`],
      ['not-found-es', `${gw.baseUrl}/e/zzzzzzzzzzzzzzzz?lang=es`],
      ['calendar-pt', `${cal.public_url}?lang=pt`],
      ['event-embed-nl', `${event.data.public_url}/embed?lang=nl`],
      ['calendar-embed-it', `${cal.public_url}/embed?lang=it`],
    ];
    const found: Record<string, string[]> = {};
    for (const [name, url] of pages) {
      // axe-core is injected as a script of its own: past the page's CSP for this check only.
      const { page, context } = await open(url, { userAgent: IPHONE_UA, bypassCSP: true });
      try {
        // With every control open too: the lists are checked as well.
        await page.evaluate("document.querySelectorAll('details').forEach((d) => d.setAttribute('open', ''))");
        found[name] = await axeProblems(page);
        await page.evaluate("document.querySelectorAll('details').forEach((d) => d.removeAttribute('open'))");
        await shoot(page, name);
      } finally {
        await context.close();
      }
    }
    expect(found).toEqual(Object.fromEntries(pages.map(([name]) => [name, []])));
  }, 120_000);
});
