import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { ROOT } from '../helpers/processes';
import { startGateway, type TestGateway } from '../helpers/gateway';

/**
 * The public pages as a person sees them, in a real browser (Debian's Chromium, headless,
 * driven by playwright-core). Screenshots are kept in test-artifacts/.
 */
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  gw = await startGateway();
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

      const buttons = page.locator('ul.buttons a');
      await expect(buttons.count()).resolves.toBe(7);
      const targets: Array<[string | null, string | null]> = [];
      for (let i = 0; i < (await buttons.count()); i++) targets.push([await buttons.nth(i).textContent(), await buttons.nth(i).getAttribute('href')]);
      expect(targets).toEqual([
        ['Apple', links.apple],
        ['Google', links.google],
        ['Office 365', links.office365],
        ['Outlook', links.outlook],
        ['Outlook.com', links.outlook_web],
        ['Yahoo', links.yahoo],
        ['iCal file', links.ics],
      ]);
      // every button answers: a download or a redirect to the platform
      for (const [, href] of targets) {
        const res = await fetch(href as string, { redirect: 'manual' });
        expect([200, 302]).toContain(res.status);
      }
      // readable on a phone: nothing wider than the screen, buttons large enough to tap
      await expect(page.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(390);
      const box = await buttons.first().boundingBox();
      expect(box?.height).toBeGreaterThanOrEqual(32);
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
      await expect(page.locator('ul.events li h2').allTextContents()).resolves.toEqual(['Rust night', 'TypeScript talks']);
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
      await expect(page.locator('ul.events li').first().locator('ul.buttons a').count()).resolves.toBe(7);
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
        expect(count).toBe(variant === 'single-button' ? 1 : 7);
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

  it('an RSVP is changed from the browser that gave it; another browser cannot change it', async () => {
    const team = await gw.newTeam();
    const cal = (await team.api.post('/api/calendars', { name: 'Meetups', timezone: 'UTC' })).body.data;
    const { data } = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Meetup', date_start: '2030-05-02 18:00', date_end: '2030-05-02 20:00', timezone: 'UTC', has_rsvp: true })).body;
    const mine = await openPhonePage(data.public_url);
    const other = await openPhonePage(data.public_url);
    try {
      await mine.page.fill('#rsvp-name', 'Ada');
      await mine.page.fill('#rsvp-email', 'ada@example.com');
      await mine.page.click('form[action$="/rsvp"] button[type=submit]');
      await mine.page.waitForURL(`${data.public_url}?rsvp=thanks`);
      await expect(mine.page.locator('p[role=status]').first().textContent()).resolves.toContain('Thanks, your answer is saved.');
      await expect(mine.page.locator('#rsvp-email').inputValue()).resolves.toBe('ada@example.com');

      // Someone else, typing the same address, changes nothing.
      await other.page.fill('#rsvp-name', 'Not Ada');
      await other.page.fill('#rsvp-email', 'ada@example.com');
      await other.page.check('input[name=answer][value=no]');
      await other.page.click('form[action$="/rsvp"] button[type=submit]');
      await other.page.waitForURL(`${data.public_url}?rsvp=link_sent`);
      await expect(other.page.locator('p[role=status]').first().textContent()).resolves.toContain('This email address has answered before.');

      // The browser that answered changes it: the form starts from its answer.
      await mine.page.goto(data.public_url);
      await expect(mine.page.locator('#rsvp-title + p + p').textContent()).resolves.toBe('Your answer: Yes (Ada, ada@example.com). You can change it here.');
      await mine.page.check('input[name=answer][value=maybe]');
      await mine.page.click('form[action$="/rsvp"] button[type=submit]');
      await mine.page.waitForURL(`${data.public_url}?rsvp=thanks`);
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
