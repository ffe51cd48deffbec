import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { extractionWorker } from '../../services/extraction-worker/extraction.worker';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import { smartLinkWorker } from '../../services/smart-link-worker/smart-link.worker';
import { launchChromium } from '../helpers/browser';
import { startGateway, type TestGateway, type TestTeam, testEnv } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';
import { dist, spawnNode } from '../helpers/processes';
import { outcomeOf, submitForm } from '../smart-links/helpers';
import { SHOTS, settled, signInAs, watchProblems } from './helpers';

/**
 * What an organizer does in the dashboard, end to end in Chromium against the real gateway,
 * mail worker (to a real SMTP server) and smart-link worker: signing in from the emailed
 * link, making a calendar and an event, an API token used with fetch, approving a smart-link
 * event, exporting RSVPs, inviting a member, and a member refused by the server.
 */
// Two cores shared with the rest of the suite: a browser flow may take a while.
jest.setTimeout(90_000);

const prefix = isolatedPrefix('dashboard-flows');
let sink: SmtpSink;
let gw: TestGateway;
let browser: Browser;
/**
 * The organizer every screen is used as: a team made by the admin CLI, as an operator makes
 * one, and signed in from the link the CLI emails (the first test); the API calls that set
 * up what the screens show use the token the CLI printed.
 */
let team: Pick<TestTeam, 'api' | 'token' | 'teamId' | 'userId' | 'email'>;
/** The organizer's dashboard session, as the first test's browser got it from the emailed link. */
let organizerCookies: Awaited<ReturnType<BrowserContext['cookies']>> = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  sink = await startSmtpSink();
  gw = await startGateway({ QUEUE_PREFIX: prefix });
  const mail = await startWorker((ctx) => mailWorker(ctx), { QUEUE_PREFIX: prefix, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0', PUBLIC_BASE_URL: gw.baseUrl });
  const links = await startWorker(smartLinkWorker, { QUEUE_PREFIX: prefix });
  const extractions = await startWorker((ctx) => extractionWorker(ctx), { QUEUE_PREFIX: prefix });
  closers.push(() => mail.close(), () => links.close(), () => extractions.close());
  browser = await launchChromium();
  const email = `cli-organizer-${Date.now()}@example.test`;
  const made = await cli('create-team', '--name', 'Riverside choir', '--email', email, '--plan', 'business');
  const row = await gw.db('users').where({ email }).first('id', 'team_id');
  team = { api: gw.anon.as(made.token), token: made.token, teamId: Number(row.team_id), userId: Number(row.id), email };
}, 60_000);

/** The admin CLI, as an operator runs it; answers what it printed. */
async function cli(...args: string[]): Promise<Record<string, string>> {
  const run = spawnNode(dist('admin/main.js'), testEnv({ QUEUE_PREFIX: prefix, PUBLIC_BASE_URL: gw.baseUrl }), args);
  const { code } = await run.exited;
  expect({ code, err: run.stderr() }).toEqual({ code: 0, err: '' });
  return JSON.parse(run.stdout());
}
afterAll(async () => {
  await browser?.close();
  for (const close of closers) await close();
  await gw?.close();
  await sink?.close();
});

/** The sign-in link in the newest message to `email` (its text part). */
async function linkIn(email: string, count: number): Promise<string> {
  const mails = await waitFor(() => sink.for(email).length >= count && sink.for(email), { what: `message ${count} to ${email}` });
  const url = String(mails[count - 1].parsed.text)
    .split(/\s/)
    .find((w) => w.includes('/app/sign-in#token='));
  if (!url) throw new Error('no sign-in link in the message');
  return url;
}

/**
 * Waits for the overview a sign-in link leads to. On a busy machine the first page of a
 * browser can take a while; when it does not come, the test fails with what the page shows
 * (and a screenshot), not with a bare timeout.
 */
async function signedInOrSaysWhy(page: Page, name: string): Promise<void> {
  try {
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: 45_000 });
  } catch (err) {
    await page.screenshot({ path: path.join(SHOTS, `failed-${name}.png`), fullPage: true }).catch(() => undefined);
    const shown = (await page.locator('main, body').first().innerText().catch(() => '')).slice(0, 500);
    throw new Error(`no overview after the sign-in link; the page at ${page.url()} shows: ${shown}`, { cause: err });
  }
  expect(await page.getByRole('alert').allTextContents()).toEqual([]);
}

async function open(context: BrowserContext, address: string, heading: string | RegExp): Promise<{ page: Page; problems: string[]; outside: string[] }> {
  const page = await context.newPage();
  // A step that does not happen fails on its own line, well before the test's timeout.
  page.setDefaultTimeout(20_000);
  const watched = watchProblems(page, gw.baseUrl);
  await page.goto(`${gw.baseUrl}${address}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  return { page, ...watched };
}

/** A browser signed in as the organizer, with the session the emailed link gave them. */
async function ownerContext(width = 1280): Promise<BrowserContext> {
  if (!organizerCookies.length) throw new Error('the organizer has not signed in from the emailed link (the first test)');
  const context = await browser.newContext({ viewport: { width, height: 900 }, acceptDownloads: true });
  await context.addCookies(organizerCookies);
  return context;
}

describe('the dashboard, end to end', () => {
  it('lets a new organizer made by the admin CLI in from the link the CLI emails, and create a calendar', async () => {
    // The organizer of every later test: what they do there, this person does.
    const email = team.email;
    expect(await cli('sign-in-link', '--email', email)).toMatchObject({ email, sent: true });
    const link = await linkIn(email, 1);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      const watched = watchProblems(page, gw.baseUrl);
      await page.goto(link);
      await signedInOrSaysWhy(page, 'cli-organizer');
      await page.goto(`${gw.baseUrl}/app/calendars/new`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Rehearsals');
      await page.getByRole('button', { name: /create calendar/i }).click();
      await waitFor(async () => (await gw.db('calendars as c').join('users as u', 'u.team_id', 'c.team_id').where({ 'u.email': email, 'c.name': 'Rehearsals' }).first()) ?? undefined, {
        what: 'the calendar made from the dashboard',
      });
      expect(watched.problems).toEqual([]);
      organizerCookies = await context.cookies();
    } finally {
      await context.close();
    }
  });

  it('signs in from the emailed link: the POST signs in, the token leaves the address bar, and the link works once', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const { page, problems, outside } = await open(context, '/app/events', 'Sign in');
      const before = sink.for(team.email).length;
      await page.getByLabel('Email').fill(team.email);
      await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
      await page.getByText('a sign-in link is on its way').waitFor();
      const link = await linkIn(team.email, before + 1);
      expect(link.startsWith(`${gw.baseUrl}/app/sign-in#token=`)).toBe(true);

      // Loading the link's page is a GET that signs nobody in; the app posts the token.
      const posted: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/api/auth/sessions')) posted.push(`${r.method()} ${r.postData()}`);
      });
      await page.goto(link);
      // Signed in (the overview), or refused (an alert saying why).
      await page.locator('h1:text-is("Overview"), [role=alert]').first().waitFor();
      expect(await page.getByRole('alert').allTextContents()).toEqual([]);
      expect(posted).toEqual([`POST ${JSON.stringify({ token: new URL(link).hash.slice('#token='.length) })}`]);
      expect(page.url()).toBe(`${gw.baseUrl}/app`);
      await expect(page.evaluate('location.hash')).resolves.toBe('');
      const cookies = await context.cookies();
      expect(cookies.find((c) => c.name === 'cs_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
      await page.screenshot({ path: path.join(SHOTS, 'flow-signed-in-390.png'), fullPage: true });

      // The same link again (a second click, a mail scanner): refused, and said so.
      const second = await browser.newContext();
      const again = await second.newPage();
      await again.goto(link);
      await again.getByRole('alert').waitFor();
      await expect(again.getByRole('alert').textContent()).resolves.toMatch(/expired or was already used/);
      await second.close();

      // Signing out ends the session: the next request is the sign-in screen.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await page.goto(`${gw.baseUrl}/app/calendars`);
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect(problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('sets a password on the account screen, then signs in with it', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const someone = await gw.newTeam();
    await signInAs(gw, context, someone);
    try {
      const { page, problems } = await open(context, '/app/account', 'Account');
      await page.getByLabel('New password').fill('short');
      await page.getByRole('button', { name: 'Save password' }).click();
      // The API's 422 beside its field.
      await page.locator('.field.invalid .field-error').waitFor();
      await expect(page.getByLabel('New password').getAttribute('aria-invalid')).resolves.toBe('true');
      await page.getByLabel('New password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Save password' }).click();
      await page.getByText('Your password is saved.').waitFor();
      await page.getByRole('heading', { name: 'Change your password' }).waitFor();
      await page.getByRole('button', { name: 'Sign out', exact: true }).first().click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await page.getByRole('button', { name: 'Sign in with a password instead' }).click();
      await page.getByLabel('Email').fill(someone.email);
      await page.getByLabel('Password').fill('wrong password here');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').waitFor();
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      // Its own calls answered first: one still in flight would meet the 401 on this screen.
      await settled(page, 'the overview');
      // The session ends while a screen is open (here: everywhere, by an API call): the next
      // call's 401 brings the sign-in screen, and signing in again leads back to that screen.
      expect((await someone.api.post('/api/session/revoke-all')).status).toBe(200);
      await page.getByRole('button', { name: 'Menu' }).click();
      await expect(page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).resolves.toBe('true');
      await page.getByRole('link', { name: 'Calendars' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/app/calendars');
      await page.getByRole('button', { name: 'Sign in with a password instead' }).click();
      await page.getByLabel('Email').fill(someone.email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Calendars' }).waitFor();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('offers sign-up only where it is open', async () => {
    const open_ = await startGateway({ QUEUE_PREFIX: prefix, SIGNUP: 'open' });
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      // Here sign-up is by invitation: no link to it, and its address says so.
      await page.goto(`${gw.baseUrl}/app/sign-in`);
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await page.waitForLoadState('networkidle');
      await expect(page.getByRole('link', { name: 'Create a team' }).count()).resolves.toBe(0);
      await page.goto(`${gw.baseUrl}/app/sign-up`);
      await page.getByRole('heading', { level: 1, name: 'Sign-up is closed' }).waitFor();
      // Where it is open: the form, and a message once sent.
      await page.goto(`${open_.baseUrl}/app/sign-in`);
      await page.getByRole('link', { name: 'Create a team' }).click();
      await page.getByRole('heading', { level: 1, name: 'Create a team' }).waitFor();
      const email = `founder-${process.env.TEST_RUN_ID ?? 'x'}@people.example.test`;
      await page.getByLabel('Your name').fill('Fay Founder');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Team name').fill('Fay’s events');
      await page.getByRole('button', { name: 'Create the team' }).click();
      await page.getByText(`Check ${email}`).waitFor();
      await page.screenshot({ path: path.join(SHOTS, 'flow-sign-up-390.png'), fullPage: true });
      await waitFor(() => sink.for(email).length === 1, { what: 'the sign-up message' });
    } finally {
      await context.close();
      await open_.close();
    }
  });

  it('creates a calendar with the keyboard, and an event with a recurrence, then shows its links', async () => {
    const context = await ownerContext();
    try {
      const { page, problems } = await open(context, '/app/calendars/new', 'New calendar');
      // The screen's heading has the focus; the first stop in the page is the skip link, visible when focused.
      await expect(page.evaluate('document.activeElement.tagName + document.activeElement.textContent')).resolves.toBe('H1New calendar');
      await expect(page.evaluate("document.querySelector('a[href], button, input, select, textarea').textContent")).resolves.toBe('Skip to content');
      const skip = page.getByRole('link', { name: 'Skip to content' });
      await skip.focus();
      await expect(page.evaluate("document.activeElement.getBoundingClientRect().top >= 0 && getComputedStyle(document.activeElement).outlineStyle")).resolves.toBe('solid');
      // From the heading, Tab goes to the first field, which shows its focus.
      await page.getByRole('heading', { level: 1 }).focus();
      await page.keyboard.press('Tab');
      await expect(page.evaluate("document.activeElement.id === document.querySelector('label').htmlFor && getComputedStyle(document.activeElement).outlineStyle")).resolves.toBe('solid');
      await page.getByLabel('Name', { exact: true }).focus();
      await page.keyboard.type('Board meetings');
      await page.getByLabel('Time zone').selectOption('America/New_York');
      await page.getByLabel('Organizer email').fill('board@example.com');
      await page.getByLabel('Organizer email').press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Calendar: Board meetings' }).waitFor();
      const cal = (await team.api.get('/api/calendars')).body.data.find((c: { name: string }) => c.name === 'Board meetings');
      expect(cal).toMatchObject({ timezone: 'America/New_York', organizer_email: 'board@example.com', week_begins: 1 });

      await page.goto(`${gw.baseUrl}/app/events/new?calendar=${cal.public_id}`);
      await page.getByRole('heading', { level: 1, name: 'New event' }).waitFor();
      await page.getByLabel('Title').fill('Quarterly review');
      await page.getByLabel('Starts').fill('2031-01-06T09:30');
      await page.getByLabel('Ends').fill('2031-01-06T11:00');
      await page.getByLabel('Repeats').selectOption('WEEKLY');
      await page.getByLabel('Every how many weeks').fill('2');
      await page.getByLabel('Monday').check();
      await page.getByLabel('Thursday').check();
      await page.getByLabel('Stops').selectOption('count');
      await page.getByLabel('Times').fill('8');
      await expect(page.locator('.rule').textContent()).resolves.toBe('Every 2 weeks on Monday and Thursday, 8 times FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;COUNT=8');
      await page.getByLabel('Take RSVPs on the event page').check();
      await page.getByLabel('Places').fill('12');
      await page.getByLabel('Access code').fill('board-only');
      await page.getByRole('button', { name: 'Create event' }).click();
      await page.getByRole('heading', { level: 1, name: 'Quarterly review' }).waitFor();
      const evt = (await team.api.get(`/api/events?calendar=${cal.public_id}`)).body.data[0];
      expect(evt).toMatchObject({
        title: 'Quarterly review',
        timezone: 'America/New_York',
        date_start: '2031-01-06T09:30:00-05:00',
        has_rsvp: true,
        rsvp_limit: 12,
        is_protected: true,
        recurrence_rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;COUNT=8',
      });
      // Each link the API gives, with its copy button.
      const links = (await team.api.get(`/api/calendars/${cal.public_id}/events/${evt.public_id}`)).body.links;
      for (const url of Object.values(links)) await expect(page.locator('code', { hasText: url as string }).count()).resolves.toBeGreaterThan(0);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.baseUrl });
      await page.getByRole('button', { name: 'Copy Event page' }).click();
      await page.getByText('Copied').waitFor();
      await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(links.event_page);
      // A 422 is shown beside its field.
      await page.goto(`${gw.baseUrl}/app/events/${cal.public_id}/${evt.public_id}/edit`);
      await page.getByRole('heading', { level: 1, name: 'Edit: Quarterly review' }).waitFor();
      await page.getByLabel('Title').fill('');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('alert').waitFor();
      await expect(page.locator('.field.invalid .field-error').first().textContent()).resolves.toMatch(/title/i);
      await expect(page.getByLabel('Title').getAttribute('aria-invalid')).resolves.toBe('true');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('fills the event form from pasted text (the extraction API), then creates the event', async () => {
    const cal = (await team.api.post('/api/calendars', { name: 'Lunches', timezone: 'America/New_York' })).body.data;
    const context = await ownerContext(390);
    try {
      const { page, problems } = await open(context, `/app/events/new?calendar=${cal.public_id}`, 'New event');
      await page.getByText('Fill the form from text').click();
      await page.getByLabel('Text of the event').fill('Lunch with Dana next Tuesday at 12:30pm at Olive Garden for 45 minutes');
      await page.getByRole('button', { name: 'Read the text' }).click();
      await page.getByText('The form is filled from the text').waitFor();
      await expect(page.getByLabel('Title').inputValue()).resolves.toBe('Lunch with Dana');
      await expect(page.getByLabel('Location').inputValue()).resolves.toBe('Olive Garden');
      const start = await page.getByLabel('Starts').inputValue();
      expect(start).toMatch(/T12:30$/);
      await expect(page.getByLabel('Ends').inputValue()).resolves.toBe(`${start.slice(0, 10)}T13:15`);
      await expect(page.getByLabel('Time zone').inputValue()).resolves.toBe('America/New_York');
      await page.getByRole('button', { name: 'Create event' }).click();
      await page.getByRole('heading', { level: 1, name: 'Lunch with Dana' }).waitFor();
      const made = (await team.api.get(`/api/events?calendar=${cal.public_id}`)).body.data[0];
      expect(made).toMatchObject({ title: 'Lunch with Dana', location: 'Olive Garden', timezone: 'America/New_York' });
      expect(made.date_start.slice(0, 16)).toBe(start);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("sets a calendar's default email reminders; a new event starts with them and keeps what the form chose", async () => {
    const cal = (await team.api.post('/api/calendars', { name: 'Classes', timezone: 'Europe/Berlin' })).body.data;
    const context = await ownerContext(1280);
    try {
      const { page, problems } = await open(context, `/app/calendars/${cal.public_id}`, 'Calendar: Classes');
      const defaults = page.getByRole('group', { name: 'Email reminders of new events' });
      await defaults.getByLabel('1 day before').check();
      await defaults.getByLabel('1 hour before').check();
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText('Saved.').waitFor();
      expect((await team.api.get(`/api/calendars/${cal.public_id}`)).body.data.default_email_reminders).toEqual([1440, 60]);

      await page.goto(`${gw.baseUrl}/app/events/new?calendar=${cal.public_id}`);
      await page.getByRole('heading', { level: 1, name: 'New event' }).waitFor();
      const reminders = page.getByRole('group', { name: 'Email reminders' });
      await expect(reminders.getByLabel('1 day before').isChecked()).resolves.toBe(true);
      await expect(reminders.getByLabel('1 hour before').isChecked()).resolves.toBe(true);
      await reminders.getByLabel('1 hour before').uncheck();
      await reminders.getByLabel('15 minutes before').check();
      await page.getByLabel('Title').fill('Pottery');
      await page.getByRole('button', { name: 'Create event' }).click();
      await page.getByRole('heading', { level: 1, name: 'Pottery' }).waitFor();
      const made = (await team.api.get(`/api/events?calendar=${cal.public_id}`)).body.data[0];
      expect(made.email_reminders).toEqual([1440, 15]);
      // A time set through the API (not one of the form's) is shown, so saving keeps it.
      const put = await team.api.put(`/api/calendars/${cal.public_id}/events/${made.public_id}`, {
        title: made.title,
        date_start: made.date_start.slice(0, 16).replace('T', ' '),
        date_end: made.date_end.slice(0, 16).replace('T', ' '),
        timezone: made.timezone,
        email_reminders: [1440, 45],
      });
      expect(put.status).toBe(200);
      await page.goto(`${gw.baseUrl}/app/events/${cal.public_id}/${made.public_id}/edit`);
      const edit = page.getByRole('group', { name: 'Email reminders' });
      await expect(edit.getByLabel('45 minutes before').isChecked()).resolves.toBe(true);
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('heading', { level: 1, name: 'Pottery' }).waitFor();
      expect((await team.api.get(`/api/calendars/${cal.public_id}/events/${made.public_id}`)).body.data.email_reminders).toEqual([1440, 45]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('draws the analytics chart as wide as its card, again when the window changes width, with adds by platform', async () => {
    const cal = (await team.api.post('/api/calendars', { name: 'Charts', timezone: 'UTC' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Chart night', date_start: '2031-03-01 18:00', date_end: '2031-03-01 20:00', timezone: 'UTC' })).body.data;
    // Counts as the gateway flushes them: adds by platform, and the event's own feed.
    const ids = await gw.db('events').where({ uid: evt.uid }).first('id', 'calendar_id', 'team_id');
    const counted = (metric: string, platform: string, count: number) => ({ team_id: ids.team_id, day: new Date().toISOString().slice(0, 10), calendar_id: ids.calendar_id, event_id: ids.id, metric, platform, count });
    await gw.db('analytics_daily').insert([counted('add', 'google', 3), counted('add', 'apple', 5), counted('feed_fetch', 'event', 2), counted('view', '', 9)]);
    const context = await ownerContext(1280);
    try {
      const { page, problems } = await open(context, `/app/events/${cal.public_id}/${evt.public_id}`, 'Chart night');
      // Adds per platform, most first, beside the chart.
      const byPlatform = page.getByRole('region', { name: 'Adds by platform' });
      await byPlatform.locator('tbody tr').first().waitFor();
      const cells = await byPlatform.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
      expect(cells).toEqual([
        ['Apple', '5', '0'],
        ['Google', '3', '0'],
        ['Event feed (Get updates)', '0', '2'],
      ]);
      await page.screenshot({ path: path.join(SHOTS, 'analytics-by-platform-1280.png'), fullPage: true });
      const chart = page.locator('.chart');
      const drawn = page.locator('.chart canvas');
      await drawn.waitFor();
      const widthOf = async () => Math.round((await drawn.boundingBox())?.width ?? 0);
      const card = async () => Math.round((await chart.boundingBox())?.width ?? 0);
      expect(await widthOf()).toBe(await card());
      await page.setViewportSize({ width: 390, height: 844 });
      // (Run in the page: the project's types have no DOM, so it goes as text. Polled from
      // here: waitForFunction polls with eval in the page, which its CSP refuses.)
      const redrawn = "document.querySelector('.chart canvas').getBoundingClientRect().width === Math.max(260, document.querySelector('.chart').clientWidth)";
      await waitFor(async () => (await page.evaluate<boolean>(redrawn)) || undefined, { what: 'the chart drawn again at the new width' });
      expect(await widthOf()).toBeLessThan(390);
      expect(await widthOf()).toBe(Math.max(260, await card()));
      await page.screenshot({ path: path.join(SHOTS, 'analytics-by-platform-390.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('creates an API token shown once, which then works with fetch and a Bearer header', async () => {
    const context = await ownerContext(390);
    try {
      const { page, problems } = await open(context, '/app/tokens', 'API tokens');
      await page.getByLabel('Name').fill('Zapier');
      await page.getByRole('button', { name: 'Create token' }).click();
      const shown = page.locator('.alert.once code');
      await shown.waitFor();
      const token = (await shown.textContent()) as string;
      await expect(page.getByRole('button', { name: 'Copy Token' }).count()).resolves.toBe(1);
      const res = await fetch(`${gw.baseUrl}/api/calendars`, { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      // Listed by name, with its last use; gone after a reload (shown once).
      await page.getByRole('cell', { name: 'Zapier' }).waitFor();
      await page.screenshot({ path: path.join(SHOTS, 'flow-token-390.png'), fullPage: true });
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'API tokens' }).waitFor();
      await page.getByRole('cell', { name: 'Zapier' }).waitFor();
      await expect(page.locator('.alert.once').count()).resolves.toBe(0);
      // Revoked from the list: the token stops working.
      const row = page.getByRole('row').filter({ hasText: 'Zapier' });
      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('cell', { name: 'Zapier' }).waitFor({ state: 'detached' });
      expect((await fetch(`${gw.baseUrl}/api/calendars`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(401);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('approves a pending smart-link event from the approval queue, and rejects others at once', async () => {
    const cal = (await team.api.post('/api/calendars', { name: 'Requests', timezone: 'UTC' })).body.data;
    const link = (await team.api.post('/api/smart-links', { name: 'Request form', calendar: cal.public_id, requires_approval: true, signed: false })).body.data;
    const made: string[] = [];
    for (const title of ['Coffee with Kim', 'Spam one', 'Spam two']) {
      const sent = await submitForm(link.url, { title, start: '2031-05-01 10:00', duration: '30' });
      made.push((await outcomeOf(team, sent.body.data.id)).event_public_id);
    }
    const context = await ownerContext();
    try {
      const { page, problems } = await open(context, '/app/approvals', 'Approval queue');
      await page.getByRole('button', { name: 'Approve Coffee with Kim' }).click();
      await page.getByText('1 event approved.').waitFor();
      await page.getByLabel('Select Spam one').check();
      await page.getByLabel('Select Spam two').check();
      await page.getByRole('button', { name: 'Reject selected' }).click();
      await page.getByText('2 events rejected.').waitFor();
      const statuses = [];
      for (const evt of made) statuses.push((await team.api.get(`/api/events/${evt}`)).body.data.status);
      expect(statuses).toEqual(['approved', 'rejected', 'rejected']);
      await expect(page.getByText('Nothing waits for approval.').count()).resolves.toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('exports the RSVPs as a CSV file, invites, and deletes the event choosing not to email invitees', async () => {
    const cal = (await team.api.post('/api/calendars', { name: 'Dinners', timezone: 'UTC' })).body.data;
    const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Supper club', date_start: '2031-06-01 19:00', date_end: '2031-06-01 22:00', timezone: 'UTC', has_rsvp: true })).body.data;
    for (const [name, email, answer] of [
      ['Ada', 'ada@example.com', 'yes'],
      ['Bo', 'bo@example.com', 'no'],
    ]) {
      await fetch(`${evt.public_url}/rsvp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ name, email, answer }) });
    }
    const context = await ownerContext();
    try {
      const { page, problems } = await open(context, `/app/events/${cal.public_id}/${evt.public_id}`, 'Supper club');
      await page.getByText('1 yes').waitFor();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
      expect(download.suggestedFilename()).toBe(`rsvps-${evt.public_id}.csv`);
      const csv = fs.readFileSync(await download.path(), 'utf8');
      expect(csv).toContain('ada@example.com');
      expect(csv).toContain('bo@example.com');
      expect(csv.split('\n')[0]).toMatch(/email/i);

      // Invite someone, then delete the event without emailing them.
      await page.getByLabel('Email addresses').fill('Lin Chen <lin@example.com>');
      await page.getByRole('button', { name: 'Send invitations' }).click();
      await page.getByText('1 invited.').waitFor();
      await page.getByRole('cell', { name: /Lin Chen/ }).waitFor();
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Supper club' }).waitFor();
      await page.getByRole('button', { name: 'Delete event' }).click();
      await page.getByLabel('Email invitees a cancellation').uncheck();
      const [deleted] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'DELETE'), page.getByRole('button', { name: 'Delete event' }).click()]);
      expect(new URL(deleted.url()).searchParams.get('notify_invitees')).toBe('false');
      await expect(deleted.json()).resolves.toMatchObject({ data: { public_id: evt.public_id, invitees_notified: 0 } });
      await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
      expect((await team.api.get(`/api/events/${evt.public_id}`)).status).toBe(404);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('invites a member by email; signed in from the invitation, the member meets the server’s 403', async () => {
    const invitee = `member-${process.env.TEST_RUN_ID ?? 'x'}@people.example.test`;
    const owner = await ownerContext();
    const memberContext = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const { page, problems } = await open(owner, '/app/members', 'Members');
      await page.getByLabel('Email').fill(invitee);
      await page.getByLabel('Name', { exact: true }).fill('Mo Member');
      await page.getByLabel('Role', { exact: true }).selectOption('admin');
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByText(`${invitee} is invited`).waitFor();
      await page.getByRole('row').filter({ hasText: 'Mo Member' }).getByText('invited').waitFor();

      // The invitee signs in from the invitation, as an admin for now.
      const member = await memberContext.newPage();
      const watched = watchProblems(member, gw.baseUrl);
      await member.goto(await linkIn(invitee, 1));
      await signedInOrSaysWhy(member, 'member-invited');
      await member.goto(`${gw.baseUrl}/app/members`);
      await member.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
      await member.getByRole('button', { name: 'Send invitation' }).waitFor();

      // The owner makes them a member while their page is open: the server refuses what the page still offers.
      await page.reload();
      await page.getByLabel('Role of Mo Member').selectOption('member');
      await waitFor(async () => (await team.api.get('/api/members')).body.data.find((m: { email: string }) => m.email === invitee)?.role === 'member', { what: 'the new role' });
      await member.getByLabel('Email').fill('someone@example.com');
      await member.getByRole('button', { name: 'Send invitation' }).click();
      await member.getByRole('alert').waitFor();
      await expect(member.getByRole('alert').textContent()).resolves.toBe('This needs the admin role in the team; yours is member.');
      await expect(member.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(390);
      await member.screenshot({ path: path.join(SHOTS, 'flow-member-403-390.png'), fullPage: true });
      // After a reload the page follows the role: no admin screens, no invite form.
      await member.reload();
      await member.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
      await expect(member.getByRole('button', { name: 'Send invitation' }).count()).resolves.toBe(0);
      await expect(member.getByRole('link', { name: 'API tokens' }).count()).resolves.toBe(0);
      await member.goto(`${gw.baseUrl}/app/tokens`);
      await member.getByRole('heading', { level: 1, name: 'Not for your role' }).waitFor();
      // What the API lets a member read, the dashboard shows: smart links and webhooks, without
      // the controls that change them.
      await member.goto(`${gw.baseUrl}/app/smart-links`);
      await member.getByRole('heading', { level: 1, name: 'Smart links' }).waitFor();
      await member.getByText('Admins and owners create and change smart links.').waitFor();
      await expect(member.getByRole('button', { name: 'Create smart link' }).count()).resolves.toBe(0);
      await member.goto(`${gw.baseUrl}/app/webhooks`);
      await member.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await member.getByText('Admins and owners create and change webhooks.').waitFor();
      await expect(member.getByRole('button', { name: 'Create webhook' }).count()).resolves.toBe(0);
      expect(problems).toEqual([]);
      expect(watched.problems).toEqual([]);
    } finally {
      await owner.close();
      await memberContext.close();
    }
  });

  it("deletes the team from the owner's account screen once its name is typed, which ends every session", async () => {
    const doomed = await gw.newTeam();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    await signInAs(gw, context, doomed);
    try {
      const { page, problems } = await open(context, '/app/account', 'Account');
      await page.getByRole('heading', { name: 'Delete the team' }).waitFor();
      const name = (await gw.db('teams').first('name').where({ id: doomed.teamId })).name as string;
      // A near miss of the name: refused beside the field, nothing deleted.
      await page.getByLabel('Type the team’s name to confirm').fill(`${name}.`);
      await page.getByRole('button', { name: 'Delete the team' }).click();
      await page.getByRole('button', { name: 'Delete the team' }).last().click();
      await page.locator('.field.invalid .field-error').waitFor();
      expect((await doomed.api.get('/api/account')).status).toBe(200);
      await page.screenshot({ path: path.join(SHOTS, 'flow-delete-team-390.png'), fullPage: true });
      await page.getByLabel('Type the team’s name to confirm').fill(name);
      await page.getByRole('button', { name: 'Delete the team' }).click();
      await page.getByRole('button', { name: 'Delete the team' }).last().click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect((await doomed.api.get('/api/account')).status).toBe(401);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
