import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { type TestWorker } from '../helpers/workers';
import { outcomeOf, startSmartLinkWorker, submitForm } from '../smart-links/helpers';
import { axeProblems, SHOTS, settled, signInAs, watchProblems } from './helpers';

/**
 * Every screen of the dashboard with real data, at a phone's width and a desktop's: no
 * serious or critical axe-core problem, nothing wider than the screen, no script error or CSP
 * violation, nothing loaded from elsewhere. Screenshots go to test-artifacts/dashboard/.
 */
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

let gw: TestGateway;
let browser: Browser;
let worker: TestWorker<unknown, unknown>;
let team: TestTeam;
const ids: Record<string, string> = {};

beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  gw = await startGateway();
  worker = (await startSmartLinkWorker()) as TestWorker<unknown, unknown>;
  browser = await launchChromium();
  team = await gw.newTeam();
  const cal = (await team.api.post('/api/calendars', { name: 'Community meetups', timezone: 'Europe/Berlin', organizer_name: 'Meetup crew' })).body.data;
  ids.cal = cal.public_id;
  const evt = (
    await team.api.post(`/api/calendars/${cal.public_id}/events`, {
      title: 'Rust night',
      date_start: '2031-02-03 18:00',
      date_end: '2031-02-03 20:00',
      timezone: 'Europe/Berlin',
      location: 'Kulturbrauerei, Berlin',
      has_rsvp: true,
      rsvp_limit: 40,
      recurrence_rule: 'FREQ=WEEKLY;BYDAY=MO;COUNT=6',
    })
  ).body.data;
  ids.evt = evt.public_id;
  for (const [name, email, answer] of [
    ['Ada Lovelace', 'ada@example.com', 'yes'],
    ['Grace Hopper', 'grace@example.com', 'maybe'],
    ['Alan Turing', 'alan@example.com', 'no'],
  ]) {
    const res = await fetch(`${evt.public_url}/rsvp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ name, email, answer }) });
    if (res.status !== 202) throw new Error(`RSVP: ${res.status} ${await res.text()}`);
  }
  await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email: 'lin@example.com', name: 'Lin Chen' }, { email: 'sam@example.com' }] });
  await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'TypeScript talks', date_start: '2031-03-03', date_end: '2031-03-03', timezone: 'Europe/Berlin', is_all_day: true });
  await fetch(evt.public_url, { headers: { 'User-Agent': BROWSER_UA } });
  await fetch(`${cal.public_url}/subscribe/ics`, { method: 'POST', redirect: 'manual', headers: { 'User-Agent': BROWSER_UA } });

  const link = (await team.api.post('/api/smart-links', { name: 'Website form', calendar: cal.public_id, requires_approval: true, signed: false })).body.data;
  ids.sl = link.id;
  for (const title of ['Intro call with Dana', 'Workshop proposal']) {
    const sent = await submitForm(link.url, { title, start: '2031-04-10 14:00', duration: '30', location: 'Zoom' });
    await outcomeOf(team, sent.body.data.id);
  }
  await team.api.post('/api/tokens', { name: 'CRM sync' });
  await team.api.post('/api/extension/token');
  await team.api.post('/api/members', { email: 'bea@example.com', name: 'Bea Admin', role: 'admin' });
  await team.api.post('/api/members', { email: 'cy@example.com', name: 'Cy Member', role: 'member' });
  const hook = await team.api.post('/api/webhooks', { url: 'https://hooks.example.com/calendar', description: 'CRM', event_types: ['event.created', 'rsvp.created'] });
  if (hook.status !== 201 && hook.status !== 200) throw new Error(`webhook: ${hook.status} ${hook.text}`);
  ids.wh = hook.body.data.id;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await worker?.close();
  await gw?.close();
});

const screens = (): Array<[string, string, string]> => [
  ['overview', '/app', 'Overview'],
  ['calendars', '/app/calendars', 'Calendars'],
  ['calendar-new', '/app/calendars/new', 'New calendar'],
  ['calendar-edit', `/app/calendars/${ids.cal}`, 'Calendar: Community meetups'],
  ['events', '/app/events', 'Events'],
  ['event-new', '/app/events/new', 'New event'],
  ['event-detail', `/app/events/${ids.cal}/${ids.evt}`, 'Rust night'],
  ['event-edit', `/app/events/${ids.cal}/${ids.evt}/edit`, 'Edit: Rust night'],
  ['approvals', '/app/approvals', 'Approval queue'],
  ['subscribers', `/app/subscribers?calendar=${ids.cal}`, 'Subscribers'],
  ['smart-links', '/app/smart-links', 'Smart links'],
  ['smart-link', `/app/smart-links/${ids.sl}`, 'Smart link: Website form'],
  ['webhooks', '/app/webhooks', 'Webhooks'],
  ['webhook', `/app/webhooks/${ids.wh}`, 'Webhook'],
  ['tokens', '/app/tokens', 'API tokens'],
  ['members', '/app/members', 'Members'],
  ['account', '/app/account', 'Account'],
];

describe('every screen of the dashboard', () => {
  for (const width of [390, 1280]) {
    it(`is usable at ${width} px: axe-core finds nothing serious, nothing overflows, no errors`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
      await signInAs(gw, context, team);
      const found: Record<string, string[]> = {};
      try {
        for (const [name, address, heading] of screens()) {
          const page = await context.newPage();
          const { problems, outside } = watchProblems(page, gw.baseUrl);
          await page.goto(`${gw.baseUrl}${address}`);
          await page.getByRole('heading', { level: 1, name: heading }).waitFor();
          await settled(page, name);
          // Closed controls open, so axe checks what is inside them too.
          await page.evaluate("document.querySelectorAll('details').forEach((d) => d.setAttribute('open', ''))");
          found[name] = [...(await axeProblems(page)), ...problems, ...outside.map((u) => `outside request: ${u}`)];
          const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
          if (scrollWidth > width) found[name].push(`wider than the screen: ${scrollWidth} px`);
          await page.evaluate("document.querySelectorAll('details').forEach((d) => d.removeAttribute('open'))");
          await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
          await page.close();
        }
        const signedOut = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
        const page = await signedOut.newPage();
        await page.goto(`${gw.baseUrl}/app/sign-in`);
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        found['sign-in'] = await axeProblems(page);
        await page.screenshot({ path: path.join(SHOTS, `sign-in-${width}.png`), fullPage: true });
        await signedOut.close();
      } finally {
        await context.close();
      }
      expect(found).toEqual(Object.fromEntries([...screens().map(([name]) => name), 'sign-in'].map((name) => [name, []])));
    }, 240_000);
  }
});
