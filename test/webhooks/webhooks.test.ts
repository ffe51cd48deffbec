import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { parseNetworks } from '../../shared/net/networks';
import { BlockedAddressError, postGuarded } from '../../services/webhook-worker/outbound';
import { extractionWorker } from '../../services/extraction-worker/extraction.worker';
import { smartLinkWorker } from '../../services/smart-link-worker/smart-link.worker';
import { mailWorker } from '../../services/mail-worker/mail.worker';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp';
import { newLink, submitForm } from '../smart-links/helpers';
import { webhookWorker } from '../../services/webhook-worker/webhook.worker';
import { createLogger } from '../../shared/logging/logger';
import { Producer } from '../../shared/queues/queues';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { webhookJob } from '../../shared/queues/webhook.job';
import { recordWebhookEvent } from '../../shared/webhooks/outbox';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { isolatedDatabase, isolatedPrefix } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';

/**
 * Outbound webhooks through the real gateway, webhook worker, Postgres and Redis, to a real
 * HTTP receiver on loopback (let through by WEBHOOK_ALLOWED_NETWORKS). Every delivery is
 * verified with the reference Standard Webhooks library (npm `standardwebhooks`), not with
 * our own code.
 */
jest.setTimeout(60_000);

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Reply = { status: number; headers?: Record<string, string>; body?: string };

/** A receiver: records every request; `answer` decides each reply by path (default 200). */
class Receiver {
  readonly received: Received[] = [];
  /** The reply to a request (or its promise: the request is held until it settles). */
  answer: (req: Received, nth: number) => Reply | Promise<Reply> = () => ({ status: 200, body: 'ok' });
  private server!: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const got = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.received.push(got);
        void Promise.resolve(this.answer(got, this.received.filter((r) => r.path === got.path).length)).then((reply) =>
          res.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? ''),
        );
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const base = { QUEUE_PREFIX: isolatedPrefix('webhooks'), WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' };
let env: Record<string, string> = base;
/** A database of its own: on the run's, this worker's relay would send other files' deliveries, and theirs these. */
let database: Awaited<ReturnType<typeof isolatedDatabase>>;
let gw: TestGateway;
let worker: TestWorker<unknown, unknown>;
let extractor: TestWorker<unknown, unknown>;
let smartLinks: TestWorker<unknown, unknown>;
let mailer: TestWorker<unknown, unknown>;
let sink: SmtpSink;
let receiver: Receiver;
let team: TestTeam;
let calendar: { public_id: string };

beforeAll(async () => {
  receiver = new Receiver();
  await receiver.start();
  database = await isolatedDatabase('webhooks');
  env = { ...base, DATABASE_URL: database.url };
  gw = await startGateway(env);
  worker = (await startWorker(webhookWorker, env)) as unknown as TestWorker<unknown, unknown>;
  extractor = (await startWorker((ctx) => extractionWorker(ctx), env)) as unknown as TestWorker<unknown, unknown>;
  smartLinks = (await startWorker(smartLinkWorker, { ...env, PUBLIC_BASE_URL: gw.baseUrl })) as unknown as TestWorker<unknown, unknown>;
  sink = await startSmtpSink({ answer: ({ to }) => (to.some((r) => r.startsWith('bounce')) ? { code: 550, message: '5.1.1 Recipient address rejected: User unknown' } : 'accept') });
  mailer = (await startWorker((ctx) => mailWorker(ctx), { ...env, SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '0' })) as unknown as TestWorker<unknown, unknown>;
  team = await gw.newTeam();
  calendar = (await team.api.post('/api/calendars', { name: 'Hooks', timezone: 'Europe/Paris' })).body.data;
});
afterAll(async () => {
  await worker?.close();
  await extractor?.close();
  await smartLinks?.close();
  await mailer?.close();
  await sink?.close();
  await gw?.close();
  await receiver?.stop();
  await database?.drop();
});

let paths = 0;
/** A webhook to its own path on the receiver. */
async function hook(body: Record<string, unknown> = {}) {
  const path = `/hook-${++paths}`;
  const res = await team.api.post('/api/webhooks', { url: `${receiver.url}${path}`, ...body });
  expect(res.status).toBe(200);
  return { path, id: res.body.data.id as string, secret: res.body.data.secret as string };
}

/** The body, verified with the reference library against the secret; throws when it does not verify. */
const verified = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, unknown> };

const event = (title: string) => ({ title, date_start: '2031-03-01 10:00', date_end: '2031-03-01 11:00', timezone: 'Europe/Paris' });

describe('the webhooks API', () => {
  it('shows the secret once, lists and updates webhooks, and refuses bad endpoints with the documented errors', async () => {
    const created = await hook({ description: 'CRM sync', event_types: ['event.created'] });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const got = await team.api.get(`/api/webhooks/${created.id}`);
    expect(got.body.data).toMatchObject({ id: created.id, description: 'CRM sync', event_types: ['event.created'], is_active: true });
    expect(got.body.data.secret).toBeUndefined();
    expect((await team.api.get('/api/webhooks')).body.data.map((w: { id: string }) => w.id)).toContain(created.id);
    const put = await team.api.put(`/api/webhooks/${created.id}`, { url: `${receiver.url}${created.path}`, event_types: null });
    expect(put.body.data).toMatchObject({ event_types: null, description: 'CRM sync' });

    for (const [url, message] of [
      ['ftp://example.com/x', 'The url field must be an http or https URL.'],
      ['http://10.1.2.3/hook', 'The url field must name a public address.'],
      ['http://169.254.169.254/latest/meta-data', 'The url field must name a public address.'],
      ['http://[::1]:8080/hook', 'The url field must name a public address.'],
      ['https://user:secret@example.com/hook', 'The url field must not carry a user name or password.'],
    ]) {
      const res = await team.api.post('/api/webhooks', { url });
      expect([res.status, res.body.errors]).toEqual([422, { url: [message] }]);
    }
    const badType = await team.api.post('/api/webhooks', { url: 'https://example.com/x', event_types: ['event.exploded'] });
    expect(badType.status).toBe(422);
    expect(Object.keys(badType.body.errors)).toEqual(['event_types.0']);
    // Another team's webhook is not found.
    const other = await gw.newTeam();
    expect((await other.api.get(`/api/webhooks/${created.id}`)).status).toBe(404);
  });

  it('takes https only unless WEBHOOK_ALLOW_HTTP is set', async () => {
    const strict = await startGateway({ QUEUE_PREFIX: isolatedPrefix('webhooks_https') });
    try {
      const own = await strict.newTeam();
      const plain = await own.api.post('/api/webhooks', { url: 'http://hooks.example.com/in' });
      expect([plain.status, plain.body.errors]).toEqual([422, { url: ['The url field must be an https URL.'] }]);
      expect((await own.api.get('/api/webhooks')).body.data).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});

describe('deliveries', () => {
  it('tells of an event created, updated, approved and deleted, in order, each signed as Standard Webhooks', async () => {
    const h = await hook();
    const created = (await team.api.post(`/api/calendars/${calendar.public_id}/events`, event('Board meeting'))).body.data;
    await team.api.put(`/api/calendars/${calendar.public_id}/events/${created.public_id}`, event('Board meeting (moved)'));
    await team.api.post(`/api/events/${created.public_id}/reject`, {});
    await team.api.post(`/api/events/${created.public_id}/approve`, {});
    await team.api.delete(`/api/calendars/${calendar.public_id}/events/${created.public_id}`);
    await waitFor(() => receiver.at(h.path).length >= 5, { what: 'five deliveries' });
    const bodies = receiver.at(h.path).map((r) => verified(h.secret, r));
    expect(bodies.map((b) => b.type)).toEqual(['event.created', 'event.updated', 'event.rejected', 'event.approved', 'event.deleted']);
    expect(bodies.map((b) => b.data.title)).toEqual(['Board meeting', 'Board meeting (moved)', 'Board meeting (moved)', 'Board meeting (moved)', 'Board meeting (moved)']);
    expect(bodies.every((b) => b.data.public_id === created.public_id && !Number.isNaN(Date.parse(b.timestamp)))).toBe(true);
    // Each message has an id of its own.
    expect(new Set(receiver.at(h.path).map((r) => r.headers['webhook-id'])).size).toBe(5);
    // A signature made with another secret does not verify.
    expect(() => verified(`whsec_${Buffer.alloc(24, 7).toString('base64')}`, receiver.at(h.path)[0])).toThrow();
  });

  it('sends a burst through two workers once each, in order per event', async () => {
    // More than a webhook may have relayed at once (200), so relays follow one another while
    // jobs run, in two workers sharing the outbox.
    const second = (await startWorker(webhookWorker, env)) as unknown as TestWorker<unknown, unknown>;
    try {
      const h = await hook({ event_types: ['event.created', 'event.updated'] });
      const EVENTS = 250;
      const ids: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let i = next++; i < EVENTS; i = next++) {
            const created = (await team.api.post(`/api/calendars/${calendar.public_id}/events`, event(`Burst ${i}`))).body.data;
            ids.push(created.public_id as string);
            await team.api.put(`/api/calendars/${calendar.public_id}/events/${created.public_id}`, event(`Burst ${i} (moved)`));
          }
        }),
      );
      await waitFor(() => receiver.at(h.path).length >= 2 * EVENTS, { what: 'every delivery', timeoutMs: 30_000 });
      const bodies = receiver.at(h.path).map((r) => verified(h.secret, r));
      const perEvent = new Map<string, string[]>();
      for (const b of bodies) perEvent.set(b.data.public_id as string, [...(perEvent.get(b.data.public_id as string) ?? []), b.type]);
      expect(perEvent.size).toBe(EVENTS);
      expect([...perEvent].filter(([, types]) => types.join() !== 'event.created,event.updated')).toEqual([]);
      expect(new Set(receiver.at(h.path).map((r) => r.headers['webhook-id'])).size).toBe(2 * EVENTS);
      expect(ids.every((id) => perEvent.has(id))).toBe(true);
    } finally {
      await second.close();
    }
  });

  it('tells of RSVPs given, changed and removed, and of subscribers', async () => {
    const h = await hook({ event_types: ['rsvp.created', 'rsvp.updated', 'rsvp.deleted', 'subscriber.created'] });
    const e = (await team.api.post(`/api/calendars/${calendar.public_id}/events`, { ...event('Open day'), has_rsvp: true })).body.data;
    const first = await gw.anon.post(`/e/${e.uid}/rsvp`, { name: 'Ada', email: 'ada-hooks@example.com', answer: 'yes' }, { headers: { Accept: 'application/json' } });
    expect([first.status, first.body]).toEqual([202, { data: { status: 'received' } }]);
    // Ada changes her answer with the key of her confirmation's change link.
    const changeLink = /^Change your answer: (\S+)$/m;
    const confirmation = await waitFor(() => sink.for('ada-hooks@example.com').find((m) => changeLink.test(String(m.parsed.text))), { what: "Ada's confirmation" });
    const key = new URL(changeLink.exec(String(confirmation.parsed.text))?.[1] as string).searchParams.get('key');
    const again = await gw.anon.post(`/e/${e.uid}/rsvp`, { name: 'Ada', email: 'ada-hooks@example.com', answer: 'maybe', key }, { headers: { Accept: 'application/json' } });
    expect(again.status).toBe(200);
    const id = again.body.data.id as string;
    expect((await team.api.delete(`/api/calendars/${calendar.public_id}/events/${e.public_id}/rsvps/${id}`)).status).toBe(200);
    const cal = (await team.api.get(`/api/calendars/${calendar.public_id}`)).body.data;
    const subscribed = await fetch(`${cal.public_url}/subscribe/google`, { method: 'POST', redirect: 'manual', headers: { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' } });
    expect(subscribed.status).toBe(303);
    await waitFor(() => receiver.at(h.path).length >= 4, { what: 'four deliveries' });
    const bodies = receiver.at(h.path).map((r) => verified(h.secret, r));
    // In order about the one answer; the subscriber, another resource, in no order with them.
    expect(bodies.filter((b) => b.type.startsWith('rsvp.')).map((b) => [b.type, b.data.answer])).toEqual([
      ['rsvp.created', 'yes'],
      ['rsvp.updated', 'maybe'],
      ['rsvp.deleted', 'maybe'],
    ]);
    expect(bodies.filter((b) => b.type === 'subscriber.created').map((b) => b.data.platform)).toEqual(['google']);
    expect(bodies.find((b) => b.type === 'rsvp.created')?.data).toMatchObject({ id, email: 'ada-hooks@example.com', event_id: e.public_id });
  });

  it('tells of extractions finished by the extraction worker, as the API shows them', async () => {
    const h = await hook({ event_types: ['extraction.completed', 'extraction.failed'] });
    const asked = await team.api.post('/api/events/extract', { text: 'Team lunch on 2031-05-01 at noon at Cafe Luna', timezone: 'UTC' });
    expect(asked.status).toBe(202);
    await waitFor(() => receiver.at(h.path).length >= 1, { what: 'the extraction to be told of' });
    const [told] = receiver.at(h.path).map((r) => verified(h.secret, r));
    const shown = (await team.api.get(`/api/events/extract/${asked.body.data.id}`)).body.data;
    expect(told.type).toBe('extraction.completed');
    expect(told.data).toEqual(shown);
    // A text the extractor does not read: failed, and told so with its reason.
    const german = await team.api.post('/api/events/extract', { text: 'Mittagessen mit dem Team am Montag um 12 Uhr im Café Luna', timezone: 'UTC' });
    expect(german.status).toBe(202);
    await waitFor(() => receiver.at(h.path).length >= 2, { what: 'the failed extraction to be told of' });
    const failed = verified(h.secret, receiver.at(h.path)[1]);
    const failedShown = (await team.api.get(`/api/events/extract/${german.body.data.id}`)).body.data;
    expect([failed.type, failed.data]).toEqual(['extraction.failed', failedShown]);
    expect(failedShown).toMatchObject({ status: 'failed', error: 'unsupported_language' });
  });

  it('tells of smart-link submissions processed or failed, as the API shows them', async () => {
    const h = await hook({ event_types: ['smart_link.submission_processed', 'smart_link.submission_failed'] });
    const { link } = await newLink(gw, team);
    const good = await submitForm(link.url, { title: 'From the form', start: '2031-02-01 09:00' });
    expect(good.status).toBe(202);
    await waitFor(() => receiver.at(h.path).length >= 1, { what: 'the submission to be told of' });
    const [told] = receiver.at(h.path).map((r) => verified(h.secret, r));
    const shown = (await team.api.get(`/api/smart-link-submissions/${good.body.data.id}`)).body.data;
    expect(told.type).toBe('smart_link.submission_processed');
    expect(told.data).toEqual(shown);
    expect(shown.event_public_id).toMatch(/^evt_/);
  });

  it('tells of a smart-link submission that failed for its own reason (the plan limit), as the API shows it', async () => {
    const limited = await gw.newTeam({ eventLimit: 1 });
    const path = `/hook-${++paths}`;
    const made = await limited.api.post('/api/webhooks', { url: `${receiver.url}${path}`, event_types: ['smart_link.submission_processed', 'smart_link.submission_failed'] });
    const secret = made.body.data.secret as string;
    const { link } = await newLink(gw, limited);
    const first = await submitForm(link.url, { title: 'Fits', start: '2031-02-01 09:00' });
    await waitFor(() => receiver.at(path).length >= 1, { what: 'the first submission to be told of' });
    const second = await submitForm(link.url, { title: 'Over the limit', start: '2031-02-02 09:00' });
    await waitFor(() => receiver.at(path).length >= 2, { what: 'the second submission to be told of' });
    const told = receiver.at(path).map((r) => verified(secret, r));
    const shown = (await limited.api.get(`/api/smart-link-submissions/${second.body.data.id}`)).body.data;
    expect(told.map((b) => [b.type, b.data.id])).toEqual([
      ['smart_link.submission_processed', first.body.data.id],
      ['smart_link.submission_failed', second.body.data.id],
    ]);
    expect(told[1].data).toEqual(shown);
    expect(shown).toMatchObject({ status: 'failed', error: 'event_limit_exceeded' });
  });

  it('tells of an event a smart link made, as the events API shows it, before its submission', async () => {
    const h = await hook({ event_types: ['event.created', 'smart_link.submission_processed'] });
    const { link } = await newLink(gw, team);
    const good = await submitForm(link.url, { title: 'Made by the form', start: '2031-03-01 09:00' });
    expect(good.status).toBe(202);
    await waitFor(() => receiver.at(h.path).length >= 2, { what: 'the event and its submission to be told of' });
    const told = receiver.at(h.path).map((r) => verified(h.secret, r));
    expect(told.map((b) => b.type)).toEqual(['event.created', 'smart_link.submission_processed']);
    const submission = (await team.api.get(`/api/smart-link-submissions/${good.body.data.id}`)).body.data;
    const shown = (await team.api.get(`/api/events/${submission.event_public_id}`)).body.data;
    expect(told[0].data).toEqual(shown);
    expect(told[0].data.title).toBe('Made by the form');
  });

  it("tells of an invitee's answer from the invitation's buttons, with the invitee as the API shows it", async () => {
    const h = await hook({ event_types: ['invitee.replied', 'rsvp.created'] });
    const e = (await team.api.post(`/api/calendars/${calendar.public_id}/events`, { ...event('Tasting'), has_rsvp: true })).body.data;
    const guest = `replies-hooks-${paths}@example.test`;
    expect((await team.api.post(`/api/calendars/${calendar.public_id}/events/${e.public_id}/invites`, { invitees: [{ email: guest, name: 'Gus' }] })).status).toBe(200);
    const invitation = await waitFor(() => sink.for(guest)[0], { what: 'the invitation' });
    // The Maybe button's link, as the invitation's HTML carries it; its page POSTs the answer.
    const maybe = [...String(invitation.parsed.html).matchAll(/href="([^"]{1,2000})"/g)]
      .map((m) => new URL(m[1].replace(/&amp;/g, '&')))
      .find((u) => u.pathname === `/e/${e.uid}/reply` && u.searchParams.get('answer') === 'maybe') as URL;
    const answered = await fetch(`${gw.baseUrl}/e/${e.uid}/reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: new URLSearchParams({ key: maybe.searchParams.get('key') as string, answer: 'maybe' }),
    });
    expect(answered.status).toBe(200);
    await waitFor(() => receiver.at(h.path).length >= 2, { what: 'the answer to be told of' });
    const told = receiver.at(h.path).map((r) => verified(h.secret, r));
    expect(told.map((b) => b.type).sort()).toEqual(['invitee.replied', 'rsvp.created']);
    const replied = told.find((b) => b.type === 'invitee.replied') as { data: Record<string, unknown> };
    const listed = (await team.api.get(`/api/calendars/${calendar.public_id}/events/${e.public_id}/invites`)).body.data.find((i: { email: string }) => i.email === guest);
    expect(replied.data).toEqual({ ...listed, event_id: e.public_id });
    expect(replied.data).toMatchObject({ response: 'tentative', response_stale: false });
    // A team holds at most 20 webhooks: this one's place is for the tests after it.
    expect((await team.api.delete(`/api/webhooks/${h.id}`)).status).toBe(200);
  });

  it("tells of an invitee's message refused for good, with the invitee as the API shows it", async () => {
    const h = await hook({ event_types: ['invitee.delivery_failed'] });
    const e = (await team.api.post(`/api/calendars/${calendar.public_id}/events`, event('Board dinner'))).body.data;
    const invited = await team.api.post(`/api/calendars/${calendar.public_id}/events/${e.public_id}/invites`, { invitees: [{ email: 'bounce-hooks@example.test' }, { email: 'fine-hooks@example.test' }] });
    expect(invited.status).toBe(200);
    await waitFor(() => receiver.at(h.path).length >= 1, { what: 'the failure to be told of' });
    const told = receiver.at(h.path).map((r) => verified(h.secret, r));
    expect(told.map((b) => b.type)).toEqual(['invitee.delivery_failed']);
    const listed = (await team.api.get(`/api/calendars/${calendar.public_id}/events/${e.public_id}/invites`)).body.data.find((i: { email: string }) => i.email === 'bounce-hooks@example.test');
    expect(told[0].data).toEqual({ ...listed, event_id: e.public_id });
    expect(told[0].data).toMatchObject({ last_delivery: { status: 'failed', error: expect.stringContaining('550') } });
  });

  it('sends only the types a webhook asked for', async () => {
    const h = await hook({ event_types: ['event.deleted'] });
    const e = (await team.api.post(`/api/calendars/${calendar.public_id}/events`, event('Only deletion'))).body.data;
    await team.api.delete(`/api/calendars/${calendar.public_id}/events/${e.public_id}`);
    await waitFor(() => receiver.at(h.path).length >= 1, { what: 'the deletion' });
    expect(receiver.at(h.path).map((r) => verified(h.secret, r).type)).toEqual(['event.deleted']);
  });

  it("records a change only for the types a team's webhooks want, asked type by type", async () => {
    // A team of its own: the other tests' webhooks here want every type.
    const other = await gw.newTeam();
    const cal = (await other.api.post('/api/calendars', { name: 'Picky', timezone: 'Europe/Paris' })).body.data;
    const path = `/hook-picky-${++paths}`;
    const created = await other.api.post('/api/webhooks', { url: `${receiver.url}${path}`, event_types: ['event.updated', 'event.rejected'] });
    expect(created.status).toBe(200);
    const e = (await other.api.post(`/api/calendars/${cal.public_id}/events`, event('Picky'))).body.data;
    expect((await other.api.put(`/api/calendars/${cal.public_id}/events/${e.public_id}`, { ...event('Picky, moved') })).status).toBe(200);
    expect((await other.api.post(`/api/events/${e.public_id}/approve`, {})).status).toBe(200); // approved already: no change
    expect((await other.api.post(`/api/events/${e.public_id}/reject`, {})).status).toBe(200);
    expect((await other.api.delete(`/api/calendars/${cal.public_id}/events/${e.public_id}`)).status).toBe(200);
    await waitFor(() => receiver.at(path).length >= 2, { what: 'the update and the rejection' });
    expect(receiver.at(path).map((r) => verified(created.body.data.secret, r).type)).toEqual(['event.updated', 'event.rejected']);
    // No message was kept for the created and deleted event, which no webhook of the team wants.
    const types = await gw.db('webhook_messages').where({ team_id: other.teamId }).orderBy('id').pluck('type');
    expect(types).toEqual(['event.updated', 'event.rejected']);
  });

  it('marks an endpoint failing from a failed attempt and clears the mark on its next success', async () => {
    const h = await hook();
    receiver.answer = (r, nth) => (r.path === h.path && nth === 1 ? { status: 503, headers: { 'Retry-After': '1' } } : { status: 200, body: 'ok' });
    try {
      await team.api.post(`/api/calendars/${calendar.public_id}/events`, event('Failing once'));
      const marked = await waitFor(async () => ((await team.api.get(`/api/webhooks/${h.id}`)).body.data.failing_since as string | null) ?? undefined, { what: 'the failing mark' });
      expect(Date.parse(marked)).not.toBeNaN();
      await waitFor(() => receiver.at(h.path).length === 2, { what: 'the retry' });
      await waitFor(async () => (await team.api.get(`/api/webhooks/${h.id}`)).body.data.failing_since === null, { what: 'the mark cleared' });
      expect((await team.api.get(`/api/webhooks/${h.id}`)).body.data.is_active).toBe(true);
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });

  it('retries 5xx answers, honouring Retry-After, with the same webhook-id, and records each attempt', async () => {
    const h = await hook();
    receiver.answer = (r, nth) => (r.path === h.path && nth <= 2 ? { status: 503, headers: { 'Retry-After': '1' }, body: 'busy, come back' } : { status: 200, body: 'ok' });
    try {
      const res = await team.api.post(`/api/webhooks/${h.id}/test`, {});
      expect(res.status).toBe(202);
      await waitFor(() => receiver.at(h.path).length >= 3, { what: 'three attempts', timeoutMs: 30_000 });
    } finally {
      receiver.answer = () => ({ status: 200, body: 'ok' });
    }
    const tries = receiver.at(h.path);
    expect(new Set(tries.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(tries.map((r) => verified(h.secret, r).type)).toEqual(['webhook.test', 'webhook.test', 'webhook.test']);
    const deliveries = await waitFor(async () => {
      const list = (await team.api.get(`/api/webhooks/${h.id}/deliveries`)).body.data;
      return list[0]?.status === 'succeeded' ? list : undefined;
    });
    expect(deliveries[0].attempts.map((a: { status_code: number; response_body: string }) => [a.status_code, a.response_body])).toEqual([
      [503, 'busy, come back'],
      [503, 'busy, come back'],
      [200, 'ok'],
    ]);
  });

  it('waits 5 s after a first failure without Retry-After; a retry through the API goes at once', async () => {
    const h = await hook();
    receiver.answer = (r) => (r.path === h.path ? { status: 500 } : { status: 200 });
    const queued = (await team.api.post(`/api/webhooks/${h.id}/test`, {})).body.data.delivery_id;
    const pending = await waitFor(async () => {
      const [d] = (await team.api.get(`/api/webhooks/${h.id}/deliveries`)).body.data;
      return d?.attempts.length === 1 ? d : undefined;
    });
    const waited = Date.parse(pending.next_attempt_at) - Date.parse(pending.attempts[0].at);
    expect(waited).toBeGreaterThan(4000);
    expect(waited).toBeLessThan(6000);
    receiver.answer = () => ({ status: 200 });
    expect((await team.api.post(`/api/webhooks/${h.id}/deliveries/${queued}/retry`, {})).status).toBe(202);
    await waitFor(async () => (await team.api.get(`/api/webhooks/${h.id}/deliveries`)).body.data[0].status === 'succeeded', { what: 'the retry' });
    expect((await team.api.post(`/api/webhooks/${h.id}/deliveries/${queued}/retry`, {})).status).toBe(409);
  });

  it('leaves a delivery whose attempt is being made to that attempt when asked to retry it', async () => {
    const h = await hook();
    let release!: () => void;
    const held = new Promise<Reply>((resolve) => (release = () => resolve({ status: 200, body: 'ok' })));
    receiver.answer = (r) => (r.path === h.path ? held : { status: 200 });
    try {
      const queued = (await team.api.post(`/api/webhooks/${h.id}/test`, {})).body.data.delivery_id;
      await waitFor(() => receiver.at(h.path).length === 1, { what: 'the attempt, held by the endpoint' });
      expect((await team.api.post(`/api/webhooks/${h.id}/deliveries/${queued}/retry`, {})).status).toBe(202);
      // A relay runs every tenth of a second: a delivery made relayable again would be claimed and sent again meanwhile.
      const relays = async () => (await worker.ctx.db('webhook_deliveries').where({ uid: queued.slice(4) }).first('relays')).relays as number;
      const before = await relays();
      await waitFor(async () => (await worker.ctx.db.raw("SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND relayed_at IS NULL AND next_attempt_at <= now()")).rows[0].n === 0, {
        what: 'nothing relayable',
      });
      release();
      await waitFor(async () => (await team.api.get(`/api/webhooks/${h.id}/deliveries`)).body.data[0].status === 'succeeded', { what: 'the held attempt recorded' });
      expect(await relays()).toBe(before);
      expect(receiver.at(h.path)).toHaveLength(1);
    } finally {
      release();
      receiver.answer = () => ({ status: 200 });
    }
  });

  it('starts no attempt on a claim that may run out before the attempt ends; relayed again, it is sent once', async () => {
    const h = await hook();
    const webhookId = (await gw.db('webhooks').where({ uid: h.id.slice(3) }).first('id')).id as number;
    // A delivery its job reaches late (a slow endpoint's job, 4 at a time, each up to 15 s):
    // relayed 110 s ago, so the relay may take it as lost and relay it again within 10 s.
    const [uid] = await gw.db.transaction(async (trx) => {
      const uids = await recordWebhookEvent(trx, { teamId: team.teamId, type: 'webhook.test', resource: 'webhook:late', data: { late: true }, at: new Date(), webhookId });
      await trx('webhook_deliveries').whereIn('uid', uids).update({ relayed_at: trx.raw("now() - interval '110 seconds'"), relays: 1 });
      return uids;
    });
    const redis = createRedis(process.env.TEST_REDIS_URL as string, 'client');
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
    const producer = new Producer(webhookJob, redis, base.QUEUE_PREFIX, createLogger('test', 'silent'));
    try {
      await producer.add('deliver', { deliveries: [{ delivery: uid, relay: 1 }] }, { jobId: `${uid}-late` });
      await waitFor(async () => (await gw.db('webhook_deliveries').where({ uid }).first('status')).status === 'succeeded', { what: 'the delivery' });
    } finally {
      await producer.close();
      await closeRedis(redis);
    }
    // Not sent on the old claim: put back, relayed again (its second relay), and sent once.
    expect((await gw.db('webhook_deliveries').where({ uid }).first('relays')).relays).toBe(2);
    expect(receiver.at(h.path)).toHaveLength(1);
    expect(verified(h.secret, receiver.at(h.path)[0]).data).toEqual({ late: true });
  });

  it('sends the body as it was written, type first; a message stored before as jsonb goes as it did then', async () => {
    const h = await hook();
    const webhookId = (await gw.db('webhooks').where({ uid: h.id.slice(3) }).first('id')).id as number;
    const data = { uid: 'ordered', title: 'Zürich “quotes” \\ 😀', nested: { a: [2, 1], zz: 1 } };
    const at = new Date('2031-01-02T03:04:05.678Z');
    await gw.db.transaction((trx) => recordWebhookEvent(trx, { teamId: team.teamId, type: 'webhook.test', resource: 'webhook:ordered', data, at, webhookId }));
    await waitFor(() => receiver.at(h.path).length === 1, { what: 'the delivery' });
    expect(receiver.at(h.path)[0].body).toBe(JSON.stringify({ type: 'webhook.test', timestamp: at.toISOString(), data }));
    expect(verified(h.secret, receiver.at(h.path)[0]).data).toEqual(data);
    // A message recorded by the release before: its payload in jsonb, no body.
    await gw.db.transaction(async (trx) => {
      const [uid] = await recordWebhookEvent(trx, { teamId: team.teamId, type: 'webhook.test', resource: 'webhook:older', data, at, webhookId });
      const { message_id } = await trx('webhook_deliveries').where({ uid }).first('message_id');
      await trx('webhook_messages').where({ id: message_id }).update({ payload: trx.raw('body::jsonb'), body: null });
    });
    await waitFor(() => receiver.at(h.path).length === 2, { what: 'the older message' });
    expect(receiver.at(h.path)[1].body).toBe(JSON.stringify({ data, type: 'webhook.test', timestamp: at.toISOString() }));
    expect(verified(h.secret, receiver.at(h.path)[1]).data).toEqual(data);
  });

  it('does not retry other 4xx answers', async () => {
    const h = await hook();
    receiver.answer = (r) => (r.path === h.path ? { status: 410, body: 'gone' } : { status: 200 });
    try {
      await team.api.post(`/api/webhooks/${h.id}/test`, {});
      const [d] = await waitFor(async () => {
        const list = (await team.api.get(`/api/webhooks/${h.id}/deliveries`)).body.data;
        return list[0]?.status === 'failed' ? list : undefined;
      });
      expect(d.attempts).toHaveLength(1);
      expect(d.next_attempt_at).toBeNull();
      expect(receiver.at(h.path)).toHaveLength(1);
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });

  it('signs with the old and the new secret for a day after a rotation; each verifies alone', async () => {
    const h = await hook();
    const rotated = await team.api.post(`/api/webhooks/${h.id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.secret as string;
    expect(fresh).not.toBe(h.secret);
    await team.api.post(`/api/webhooks/${h.id}/test`, {});
    await waitFor(() => receiver.at(h.path).length >= 1, { what: 'the delivery' });
    const [r] = receiver.at(h.path);
    expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(fresh, r).type).toBe('webhook.test');
    expect(verified(h.secret, r).type).toBe('webhook.test');
  });

  it('turns off an endpoint that has failed every attempt for 5 days, and says why, each time', async () => {
    // The address carries a secret in its query, as some receivers want: the notice never shows it.
    const h = await hook({ url: `${receiver.url}/hook-failing?token=s3cret-value` });
    const failing = (r: Received) => r.path.startsWith('/hook-failing');
    receiver.answer = (r) => (failing(r) ? { status: 500 } : { status: 200 });
    const notices = () => sink.for(team.email).filter((m) => String(m.parsed.subject).startsWith('Webhook turned off'));
    const turnedOff = async () => {
      // Failing for six days already (as if every attempt since had failed).
      await gw.db('webhooks').where({ uid: h.id.slice(3) }).update({ failing_since: gw.db.raw("now() - interval '6 days'") });
      // A test send does not count (it checks an endpoint); a real message does.
      await team.api.post(`/api/calendars/${calendar.public_id}/events`, event('Never heard of'));
      return waitFor(async () => {
        const got = (await team.api.get(`/api/webhooks/${h.id}`)).body.data;
        return got.is_active === false ? got : undefined;
      }, { what: 'the webhook to be turned off' });
    };
    try {
      const off = await turnedOff();
      expect(off.disabled_reason).toBe('Every delivery failed for 5 days.');
      // The team's owner is told by email, once, without the address's query.
      await waitFor(() => notices().length === 1, { what: 'the notice to the owner' });
      const [notice] = notices();
      expect(String(notice.parsed.subject)).toBe(`Webhook turned off: ${receiver.url}/hook-failing?…`);
      expect(String(notice.parsed.text)).toContain('Every delivery failed for 5 days.');
      expect(`${notice.parsed.subject} ${notice.parsed.text} ${notice.parsed.html}`).not.toContain('s3cret');
      // Turned on again by its owner, it starts afresh...
      const on = await team.api.put(`/api/webhooks/${h.id}`, { url: `${receiver.url}/hook-failing?token=s3cret-value`, is_active: true });
      expect(on.body.data).toMatchObject({ is_active: true, disabled_reason: null, failing_since: null });
      // ...and failing for five days more, it is turned off and the owner told again.
      await turnedOff();
      await waitFor(() => notices().length === 2, { what: 'the second notice' });
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });

  it('sends nothing to a webhook turned off or deleted', async () => {
    const off = await hook({ is_active: false });
    const gone = await hook();
    await team.api.delete(`/api/webhooks/${gone.id}`);
    const probe = await hook();
    await team.api.post(`/api/calendars/${calendar.public_id}/events`, event('Quiet'));
    await waitFor(() => receiver.at(probe.path).length >= 1, { what: 'the active webhook' });
    expect(receiver.at(off.path)).toEqual([]);
    expect(receiver.at(gone.path)).toEqual([]);
    // A test send reaches a webhook that is off: it is how one checks an endpoint before turning it on.
    expect((await team.api.post(`/api/webhooks/${off.id}/test`, {})).status).toBe(202);
    await waitFor(() => receiver.at(off.path).length >= 1, { what: 'the test send' });
    expect(verified(off.secret, receiver.at(off.path)[0]).type).toBe('webhook.test');
  });
});

describe('the address guard', () => {
  // A long timeout: the name lookup runs in libuv's thread pool, which a busy test process can keep waiting for seconds.
  const post = (url: string, allowed = '') => postGuarded(new URL(url), '{}', {}, { timeoutMs: 15_000, allowed: parseNetworks(allowed), keepBytes: 10 });

  it.each(['http://127.0.0.1:9/', 'http://localhost:9/', 'http://169.254.169.254/latest/meta-data', 'http://10.0.0.1/', 'http://[::1]:9/', 'http://[::ffff:127.0.0.1]:9/', 'http://100.64.0.1/', 'http://0.0.0.0:9/'])(
    'refuses %s before connecting',
    async (url) => {
      // The code names the guard's refusal (a connection attempt would be ECONNREFUSED: nothing listens there).
      await expect(post(url)).rejects.toMatchObject({ code: 'EADDRBLOCKED', name: BlockedAddressError.name });
    },
  );

  it('reaches a listed network, and follows no redirect', async () => {
    const h = `${receiver.url}/redirected`;
    receiver.answer = (r) => (r.path === '/redirected' ? { status: 302, headers: { Location: 'http://169.254.169.254/' } } : { status: 200 });
    try {
      const answer = await post(h, '127.0.0.1/32');
      expect(answer.status).toBe(302);
      expect(receiver.at('/redirected')).toHaveLength(1);
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });

  it('keeps the start of a long answer, reuses its connection, and gives up on an endpoint that holds the request', async () => {
    const sockets = new Set<unknown>();
    const server = http.createServer((req, res) => {
      req.resume();
      if (req.url === '/long') req.on('end', () => res.writeHead(200).end('x'.repeat(100_000)));
      // '/held': never answered.
    });
    server.on('connection', (s) => sockets.add(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (let i = 0; i < 6; i++) expect(await post(`${base}/long`, '127.0.0.1/32')).toMatchObject({ status: 200, body: 'x'.repeat(10) });
      // Read to their end, the answers leave their connections open for the next requests.
      expect(sockets.size).toBeLessThanOrEqual(2);
      const held = postGuarded(new URL(`${base}/held`), '{}', {}, { timeoutMs: 300, allowed: parseNetworks('127.0.0.1/32'), keepBytes: 10 });
      await expect(held).rejects.toThrow('no answer within 300 ms');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
