import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { MailJob } from '../../shared/queues/mail.job';
import type { MailOutcome } from '../../services/mail-worker/mail.processor';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import { launchChromium } from '../helpers/browser';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { ROOT } from '../helpers/processes';
import { isolatedPrefix } from '../helpers/service-processes';
import { type ReceivedMail, type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';

/**
 * An invitee answers from the email: the invitation's Yes / Maybe / No buttons (HTML as the
 * mail worker sent it to a real SMTP server) open a page in Chromium; opening it changes
 * nothing, its button records the answer as an RSVP and as the invitee's response, and a
 * full event refuses a yes as the page's form does.
 */
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'emails');
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const prefix = isolatedPrefix('email_answers');

let sink: SmtpSink;
let gw: TestGateway;
let worker: TestWorker<MailJob, MailOutcome>;
let browser: Browser;
let team: TestTeam;
let cal: { public_id: string };

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  sink = await startSmtpSink();
  gw = await startGateway({ QUEUE_PREFIX: prefix });
  worker = await startWorker((ctx) => mailWorker(ctx), { QUEUE_PREFIX: prefix, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0' });
  browser = await launchChromium();
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Club', timezone: 'Europe/Paris', organizer_name: 'Dana', organizer_email: 'dana@example.test' })).body.data;
});
afterAll(async () => {
  await browser?.close();
  await worker?.close();
  await gw?.close();
  await sink?.close();
});

let n = 0;
const address = (who: string) => `${who}-${process.env.TEST_RUN_ID ?? 'x'}-${++n}@answers.example.test`;

/** The href of the email's button with this text, as a mail client shows it. */
function buttonLink(mail: ReceivedMail, label: string): string {
  const html = String(mail.parsed.html);
  // Each anchor's text is a word or two: find the anchor whose text is the label.
  for (const part of html.split('<a ').slice(1)) {
    const href = part.slice(part.indexOf('href="') + 6, part.indexOf('"', part.indexOf('href="') + 6));
    const text = part.slice(part.indexOf('>') + 1, part.indexOf('</a>')).replace(/<[^>]{0,200}>/g, '').trim();
    if (text === label) return href.replace(/&amp;/g, '&');
  }
  throw new Error(`no "${label}" button in the email`);
}

async function open(url: string, width = 390): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 844 }, userAgent: BROWSER_UA });
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

const inviteesOf = async (evt: { public_id: string }) => (await team.api.get(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`)).body.data as Array<Record<string, unknown>>;
const rsvpsOf = async (evt: { public_id: string }) => (await team.api.get(`/api/calendars/${cal.public_id}/events/${evt.public_id}/rsvps`)).body.data as Array<Record<string, unknown>>;

it('answers with one click from the invitation, and honours the RSVP limit', async () => {
  const evt = (
    await team.api.post(`/api/calendars/${cal.public_id}/events`, {
      title: 'Book club',
      date_start: '2027-04-08 19:00',
      date_end: '2027-04-08 21:00',
      timezone: 'Europe/Paris',
      has_rsvp: true,
      rsvp_limit: 1,
    })
  ).body.data;
  const ann = address('ann');
  const bob = address('bob');
  await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email: ann, name: 'Ann' }, { email: bob, name: 'Bob' }] });
  const annMail = await waitFor(() => sink.for(ann)[0], { what: "Ann's invitation" });
  const bobMail = await waitFor(() => sink.for(bob)[0], { what: "Bob's invitation" });
  const yes = buttonLink(annMail, 'Yes');
  expect(yes.startsWith(`${gw.baseUrl}/e/${evt.uid}/reply?`)).toBe(true);
  expect(buttonLink(annMail, 'No')).not.toBe(yes);
  // Each invitee's buttons are their own.
  expect(buttonLink(bobMail, 'Yes')).not.toBe(yes);

  // Every link of ours in the email leads somewhere (a page, a platform, a file), and opening
  // them all, as a mail scanner does, changes nothing.
  const ours = [...String(annMail.parsed.html).matchAll(/href="([^"]{1,2000})"/g)].map((m) => m[1].replace(/&amp;/g, '&')).filter((u) => u.startsWith(gw.baseUrl));
  expect(ours.length).toBeGreaterThanOrEqual(10);
  for (const url of ours) {
    const res = await fetch(url, { redirect: 'manual', headers: { 'user-agent': BROWSER_UA } });
    expect({ url, status: res.status, ok: [200, 302, 303].includes(res.status) }).toMatchObject({ url, ok: true });
  }

  // A mail scanner opens the link: nothing changes.
  const scanned = await fetch(yes, { headers: { 'user-agent': 'Mozilla/5.0 (compatible; SafeLinks scanner)' } });
  expect(scanned.status).toBe(200);
  expect(await scanned.text()).toContain('Answer Yes');
  expect(await rsvpsOf(evt)).toEqual([]);
  expect((await inviteesOf(evt)).map((i) => i.response)).toEqual([null, null]);

  // Ann clicks Yes in her mail client, then the page's button.
  const page = await open(yes);
  await page.screenshot({ path: path.join(ARTIFACTS, 'answer-page-390.png'), fullPage: true });
  await page.getByRole('button', { name: 'Answer Yes' }).click();
  await page.getByText('your answer is saved: Yes').waitFor();
  await page.screenshot({ path: path.join(ARTIFACTS, 'answer-saved-390.png'), fullPage: true });
  await page.context().close();
  expect(await rsvpsOf(evt)).toEqual([expect.objectContaining({ email: ann, name: 'Ann', answer: 'yes' })]);
  expect((await inviteesOf(evt)).find((i) => i.email === ann)).toMatchObject({ response: 'accepted', response_stale: false });

  // Bob's yes finds the event full: the page says so at once, offers maybe first and no
  // yes; a yes sent anyway (the place went between opening and clicking) is refused.
  const bobYes = buttonLink(bobMail, 'Yes');
  const bobPage = await open(bobYes, 1280);
  expect(await bobPage.getByRole('alert').textContent()).toContain('full');
  expect(await bobPage.getByRole('button', { name: 'Yes', exact: true }).isDisabled()).toBe(true);
  await bobPage.screenshot({ path: path.join(ARTIFACTS, 'answer-full-1280.png'), fullPage: true });
  const forced = await fetch(`${gw.baseUrl}/e/${evt.uid}/reply`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: new URLSearchParams({ key: new URL(bobYes).searchParams.get('key') as string, answer: 'yes' }),
  });
  expect(forced.status).toBe(409);
  expect(await forced.text()).toContain('full');
  // It counted against the address's RSVP limit, as the page's form does.
  expect(forced.headers.get('x-ratelimit-limit')).toBe(String(gw.config.rsvpRatePer10Minutes));
  expect(Number(forced.headers.get('x-ratelimit-remaining'))).toBeLessThan(gw.config.rsvpRatePer10Minutes - 1);
  await bobPage.getByRole('button', { name: 'Answer Maybe' }).click();
  await bobPage.getByText('your answer is saved: Maybe').waitFor();
  await bobPage.context().close();
  expect((await inviteesOf(evt)).find((i) => i.email === bob)).toMatchObject({ response: 'tentative' });

  // Ann's confirmation carries buttons too, now signed with her answer's key: she changes to No.
  const confirmation = await waitFor(() => sink.for(ann).find((m) => m.parsed.subject?.startsWith('You are going')), { what: "Ann's confirmation" });
  const no = await open(buttonLink(confirmation, 'No'));
  await no.getByRole('button', { name: 'Answer No' }).click();
  await no.getByText('your answer is saved: No').waitFor();
  await no.context().close();
  expect((await rsvpsOf(evt)).find((r) => r.email === ann)).toMatchObject({ answer: 'no' });
  expect((await inviteesOf(evt)).find((i) => i.email === ann)).toMatchObject({ response: 'declined' });
});

it('refuses a link whose key is not the recipient\'s, and one for a removed invitee', async () => {
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Picnic', date_start: '2027-05-01 12:00', date_end: '2027-05-01 15:00', timezone: 'Europe/Paris', has_rsvp: true })).body
    .data;
  const cy = address('cy');
  await team.api.post(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites`, { invitees: [{ email: cy }] });
  const mail = await waitFor(() => sink.for(cy)[0], { what: "Cy's invitation" });
  const yes = new URL(buttonLink(mail, 'Yes'));
  const key = yes.searchParams.get('key') as string;
  const tampered = `${key.slice(0, -2)}${key.endsWith('AA') ? 'BB' : 'AA'}`;
  const post = (k: string) =>
    fetch(`${gw.baseUrl}/e/${evt.uid}/reply`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key: k, answer: 'yes' }) });
  expect((await fetch(`${yes.origin}${yes.pathname}?key=${encodeURIComponent(tampered)}&answer=yes`)).status).toBe(404);
  expect((await post(tampered)).status).toBe(404);
  const [invitee] = await inviteesOf(evt);
  await team.api.delete(`/api/calendars/${cal.public_id}/events/${evt.public_id}/invites/${String(invitee.id)}`);
  expect((await post(key)).status).toBe(404);
  expect(await rsvpsOf(evt)).toEqual([]);
});
