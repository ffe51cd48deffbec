import { Queue } from 'bullmq';
import type { MailJob } from '../../shared/queues/mail.job';
import { mailJobOf } from '../helpers/mail-job';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';

// A queue prefix of this file's own and no worker: the queued jobs stay put to be looked at.
const prefix = isolatedPrefix('invites');
let gw: TestGateway;
let team: TestTeam;
let cal: { public_id: string };
let queue: Queue<MailJob>;
const queueRedis = createRedis(process.env.TEST_REDIS_URL as string, 'worker');

beforeAll(async () => {
  gw = await startGateway({ QUEUE_PREFIX: prefix, MAIL_MAX_ATTEMPTS: '4', MAIL_BACKOFF_MS: '1500', MAIL_BATCH_SIZE: '10' });
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'Europe/Berlin' })).body.data;
  queue = new Queue<MailJob>('emails', { connection: queueRedis, prefix });
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(queueRedis);
  await gw.close();
});

const newEvent = async (api = team.api, calId = cal.public_id) =>
  (await api.post(`/api/calendars/${calId}/events`, { title: 'Planning', date_start: '2026-09-01 10:00', date_end: '2026-09-01 11:00', timezone: 'Europe/Berlin' })).body
    .data as { public_id: string; uid: string; has_calendar_invites: boolean };
const invitesPath = (evt: { public_id: string }, calId = cal.public_id) => `/api/calendars/${calId}/events/${evt.public_id}/invites`;
const eventPath = (evt: { public_id: string }) => `/api/calendars/${cal.public_id}/events/${evt.public_id}`;
const deliveriesOf = async (evt: { uid: string }) =>
  gw.db('deliveries as d')
    .join('events as e', 'e.id', 'd.event_id')
    .where('e.uid', evt.uid)
    .orderBy('d.id')
    .select('d.id', 'd.email', 'd.kind', 'd.sequence', 'd.status', 'd.attempts');
const jobOf = async (deliveryId: number) => mailJobOf(queue, deliveryId);

describe('adding invitees', () => {
  it('stores them once per email, queues one invitation each and sets has_calendar_invites', async () => {
    const evt = await newEvent();
    expect(evt.has_calendar_invites).toBe(false);
    const res = await team.api.post(invitesPath(evt), {
      invitees: [
        { email: 'Ann@Example.test', name: 'Ann' },
        { email: 'bob@example.test' },
        { email: 'ann@example.TEST', name: 'Ann again' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ added: 2, already_invited: 0 });
    expect(res.body.data).toEqual([
      {
        id: expect.stringMatching(/^inv_[0-9A-Za-z]{16}$/),
        email: 'Ann@Example.test',
        name: 'Ann',
        created_at: expect.any(String),
        last_delivery: { kind: 'invitation', status: 'queued', attempts: 0, error: null, sent_at: null },
        response: null,
        responded_at: null,
        response_stale: false,
      },
      { id: expect.stringMatching(/^inv_/), email: 'bob@example.test', name: null, created_at: expect.any(String), last_delivery: expect.objectContaining({ kind: 'invitation', status: 'queued' }), response: null, responded_at: null, response_stale: false },
    ]);
    expect((await team.api.get(eventPath(evt))).body.data.has_calendar_invites).toBe(true);

    const rows = await deliveriesOf(evt);
    expect(rows.map((r) => [r.email, r.kind, r.sequence, r.status])).toEqual([
      ['Ann@Example.test', 'invitation', 0, 'queued'],
      ['bob@example.test', 'invitation', 0, 'queued'],
    ]);
    // A job per batch of messages, carrying the event as it is now, and the request's id.
    const job = await jobOf(rows[0].id);
    expect(job?.data).toMatchObject({
      kind: 'invitation',
      messages: [
        { deliveryId: rows[0].id, to: { email: 'Ann@Example.test', name: 'Ann' } },
        { deliveryId: rows[1].id, to: { email: 'bob@example.test', name: null } },
      ],
      event: { uid: evt.uid, title: 'Planning', sequence: 0, timezone: 'Europe/Berlin', uidHost: new URL(gw.baseUrl).host, url: `${gw.baseUrl}/e/${evt.uid}`, stampMs: expect.any(Number) },
      meta: { requestId: res.headers.get('x-request-id') },
    });
    expect(job?.opts).toMatchObject({ attempts: 4, backoff: { type: 'exponential', delay: 1500 } });

    // Inviting the same people again sends nothing new.
    const again = await team.api.post(invitesPath(evt), { invitees: [{ email: 'ANN@example.test' }, { email: 'cy@example.test', name: 'Cy' }] });
    expect(again.body.meta).toEqual({ added: 1, already_invited: 1 });
    expect(again.body.data.map((i: { email: string }) => i.email)).toEqual(['Ann@Example.test', 'cy@example.test']);
    expect(await deliveriesOf(evt)).toHaveLength(3);
  });

  it('lists invitees in the order added, with their last delivery, page by page', async () => {
    const evt = await newEvent();
    const emails = Array.from({ length: 5 }, (_, i) => `p${i}@example.test`);
    await team.api.post(invitesPath(evt), { invitees: emails.map((email) => ({ email })) });
    const first = await team.api.get(`${invitesPath(evt)}?per_page=3`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((i: { email: string }) => i.email)).toEqual(emails.slice(0, 3));
    expect(first.body.data[0].last_delivery).toEqual({ kind: 'invitation', status: 'queued', attempts: 0, error: null, sent_at: null });
    expect(first.body.meta).toEqual({ per_page: 3, next_cursor: expect.any(String) });
    const second = await team.api.get(`${invitesPath(evt)}?per_page=3&cursor=${first.body.meta.next_cursor}`);
    expect(second.body.data.map((i: { email: string }) => i.email)).toEqual(emails.slice(3));
    expect(second.body.meta.next_cursor).toBeNull();
    expect((await team.api.get(`${invitesPath(evt)}?cursor=nope`)).status).toBe(422);
  });

  it('answers 422 naming every bad entry, and stores nothing', async () => {
    const evt = await newEvent();
    const res = await team.api.post(invitesPath(evt), {
      invitees: [
        { email: 'good@example.test' },
        { email: 'not-an-email', name: 'X' },
        { name: 'No email' },
        { email: 'ok@example.test', name: 'a'.repeat(256) },
        'just a string',
        { email: 'line@example.test', name: 'Evil\r\nBcc: all@example.test' },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      'invitees.1.email': ['The invitees.1.email field must be a valid email address.'],
      'invitees.2.email': ['The invitees.2.email field is required.'],
      'invitees.3.name': ['The invitees.3.name field must not be greater than 255 characters.'],
      'invitees.4': ['The invitees.4 field must be an object.'],
      'invitees.5.name': ['The invitees.5.name field must be on one line, without control characters.'],
    });
    expect(res.body.message).toBe('The invitees.1.email field must be a valid email address. (and 4 more errors)');
    expect(await gw.db('invitees').join('events', 'events.id', 'invitees.event_id').where('events.uid', evt.uid).count({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await deliveriesOf(evt)).toEqual([]);
    expect((await team.api.get(eventPath(evt))).body.data.has_calendar_invites).toBe(false);
  });

  it('refuses drafts, pending and rejected events with a 409 (their page is a 404), and stores nothing', async () => {
    const draft = (
      await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Draft plan', date_start: '2026-09-01 10:00', date_end: '2026-09-01 11:00', timezone: 'Europe/Berlin', is_draft: true })
    ).body.data as { public_id: string; uid: string; public_url: string };
    expect((await fetch(draft.public_url)).status).toBe(404);
    const refused = await team.api.post(invitesPath(draft), { invitees: [{ email: 'ann@example.test' }] });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ message: 'Publish the event before inviting people.' });
    expect((await team.api.get(invitesPath(draft))).body.data).toEqual([]);
    expect(await deliveriesOf(draft)).toEqual([]);
    expect((await team.api.get(eventPath(draft))).body.data.has_calendar_invites).toBe(false);
    // published, it takes them
    await team.api.put(eventPath(draft), { title: 'Draft plan', date_start: '2026-09-01 10:00', date_end: '2026-09-01 11:00', timezone: 'Europe/Berlin', is_draft: false });
    const added = await team.api.post(invitesPath(draft), { invitees: [{ email: 'ann@example.test' }] });
    expect(added.status).toBe(200);
    expect(added.body.meta).toEqual({ added: 1, already_invited: 0 });

    for (const status of ['pending', 'rejected']) {
      const evt = await newEvent();
      await gw.db('events').where({ uid: evt.uid }).update({ status });
      const res = await team.api.post(invitesPath(evt), { invitees: [{ email: 'bob@example.test' }] });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Approve the event before inviting people.' });
      expect(await deliveriesOf(evt)).toEqual([]);
    }
  });

  it('takes 1 to 500 invitees per call', async () => {
    const evt = await newEvent();
    expect((await team.api.post(invitesPath(evt), { invitees: [] })).body.errors).toEqual({ invitees: ['The invitees field must have at least 1 item.'] });
    expect((await team.api.post(invitesPath(evt), {})).body.errors).toEqual({ invitees: ['The invitees field is required.'] });
    const tooMany = Array.from({ length: 501 }, (_, i) => ({ email: `m${i}@example.test` }));
    expect((await team.api.post(invitesPath(evt), { invitees: tooMany })).body.errors).toEqual({ invitees: ['The invitees field must not have more than 500 items (it has 501).'] });
    const max = await team.api.post(invitesPath(evt), { invitees: tooMany.slice(0, 500) });
    expect(max.status).toBe(200);
    expect(max.body.meta.added).toBe(500);
    // Batches of MAIL_BATCH_SIZE (here 10) messages, each at the team's next turn (the
    // queue takes teams in turns: test/security/mail-fairness.test.ts).
    const rows = await deliveriesOf(evt);
    const first = await jobOf(rows[0].id);
    const last = await jobOf(rows[490].id);
    expect(first?.opts.priority).toBeGreaterThanOrEqual(1);
    expect(first?.data.messages.map((m) => m.deliveryId)).toEqual(rows.slice(0, 10).map((r) => r.id));
    expect(last?.opts.priority).toBe((first?.opts.priority as number) + 49);
    expect(last?.data.messages).toHaveLength(10);
    expect((await jobOf(rows[1].id))?.id).toBe(first?.id);
    expect(first?.id).toMatch(/^mail-[0-9A-Za-z]{16}$/);
  });

  it("answers 404 for another team's event, calendar or invitee, as for unknown ones", async () => {
    const other = await gw.newTeam();
    const theirCal = (await other.api.post('/api/calendars', { name: 'Theirs', timezone: 'UTC' })).body.data;
    const theirs = await newEvent(other.api, theirCal.public_id);
    const inv = (await other.api.post(invitesPath(theirs, theirCal.public_id), { invitees: [{ email: 'x@example.test' }] })).body.data[0];
    const mine = await newEvent();
    for (const res of [
      await team.api.post(invitesPath(theirs, theirCal.public_id), { invitees: [{ email: 'y@example.test' }] }),
      await team.api.get(invitesPath(theirs, theirCal.public_id)),
      await team.api.delete(`${invitesPath(theirs, theirCal.public_id)}/${inv.id}`),
      await team.api.get(invitesPath(theirs, cal.public_id)),
      await team.api.delete(`${invitesPath(mine)}/${inv.id}`),
      await team.api.delete(`${invitesPath(mine)}/inv_nope`),
    ]) {
      expect(res.status).toBe(404);
    }
    expect((await other.api.get(invitesPath(theirs, theirCal.public_id))).body.data).toHaveLength(1);
  });
});

describe('updates, cancellations and SEQUENCE', () => {
  it('sends nothing without the flags', async () => {
    const evt = await newEvent();
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'quiet@example.test' }] });
    const put = await team.api.put(eventPath(evt), { title: 'Moved', date_start: '2026-09-02 10:00', date_end: '2026-09-02 11:00', timezone: 'Europe/Berlin' });
    expect(put.status).toBe(200);
    const del = await team.api.delete(eventPath(evt));
    expect(del.body).toEqual({ data: { public_id: evt.public_id, deleted: true, invitees_notified: 0 } });
    expect((await deliveriesOf(evt)).map((r) => r.kind)).toEqual(['invitation']);
  });

  it('queues an update per invitee with send_invite_updates, and a cancellation per invitee with notify_invitees', async () => {
    const evt = await newEvent();
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'a@example.test' }, { email: 'b@example.test' }] });
    const body = { title: 'Planning (moved)', date_start: '2026-09-03 10:00', date_end: '2026-09-03 11:00', timezone: 'Europe/Berlin' };
    await team.api.put(eventPath(evt), body); // no flag: SEQUENCE 1, nothing sent
    await team.api.put(eventPath(evt), { ...body, send_invite_updates: true }); // SEQUENCE 2
    const del = await team.api.delete(eventPath(evt), { notify_invitees: true });
    expect(del.body.data.invitees_notified).toBe(2);
    const rows = await deliveriesOf(evt);
    expect(rows.map((r) => [r.email, r.kind, r.sequence])).toEqual([
      ['a@example.test', 'invitation', 0],
      ['b@example.test', 'invitation', 0],
      ['a@example.test', 'update', 2],
      ['b@example.test', 'update', 2],
      ['a@example.test', 'cancellation', 3],
      ['b@example.test', 'cancellation', 3],
    ]);
    // The cancellation's job holds the event as it was: the event itself is gone.
    expect((await jobOf(rows[4].id))?.data).toMatchObject({ kind: 'cancellation', event: { title: 'Planning (moved)', sequence: 3 }, messages: [{ deliveryId: rows[4].id }, { deliveryId: rows[5].id }] });
    expect((await team.api.get(eventPath(evt))).status).toBe(404);
  });

  it('takes notify_invitees as a query flag on both delete paths, and refuses a value that is not a boolean or disagrees with the body', async () => {
    const first = await newEvent();
    const second = await newEvent();
    for (const evt of [first, second]) await team.api.post(invitesPath(evt), { invitees: [{ email: 'q1@example.test' }, { email: 'q2@example.test' }] });

    const maybe = await team.api.delete(`${eventPath(first)}?notify_invitees=maybe`);
    expect(maybe.status).toBe(422);
    expect(maybe.body.errors).toEqual({ notify_invitees: ['The notify invitees field must be true or false.'] });
    const shortMaybe = await team.api.delete(`/api/events/${first.public_id}?notify_invitees=maybe`);
    expect(shortMaybe.status).toBe(422);
    const disagree = await team.api.delete(`${eventPath(first)}?notify_invitees=true`, { notify_invitees: false });
    expect(disagree.status).toBe(422);
    expect(disagree.body.errors).toEqual({ notify_invitees: ['The notify invitees field must have the same value in the query and the body.'] });
    expect((await team.api.get(eventPath(first))).status).toBe(200); // nothing was deleted

    const full = await team.api.delete(`${eventPath(first)}?notify_invitees=true`);
    expect(full.body).toEqual({ data: { public_id: first.public_id, deleted: true, invitees_notified: 2 } });
    const short = await team.api.delete(`/api/events/${second.public_id}?notify_invitees=1`, { notify_invitees: 'true' });
    expect(short.body.data).toMatchObject({ deleted: true, invitees_notified: 2 });
    for (const evt of [first, second]) {
      expect((await deliveriesOf(evt)).filter((r) => r.kind === 'cancellation').map((r) => r.email)).toEqual(['q1@example.test', 'q2@example.test']);
    }
    const params = (path: string) =>
      ((gw.openapi.paths as Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>)[path].delete.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    expect(params('/api/calendars/{cal}/events/{evt}')).toContain('notify_invitees');
    expect(params('/api/events/{evt}')).toContain('notify_invitees');
  });

  it('gives a removed invitee a cancellation above everything sent, and later messages above that', async () => {
    const evt = await newEvent();
    const added = (await team.api.post(invitesPath(evt), { invitees: [{ email: 'stay@example.test' }, { email: 'go@example.test' }] })).body.data;
    const removed = await team.api.delete(`${invitesPath(evt)}/${added[1].id}`);
    expect(removed.body).toEqual({ data: { id: added[1].id, deleted: true, cancellation_queued: true } });
    expect((await team.api.get(eventPath(evt))).body.data.has_calendar_invites).toBe(true);
    expect((await team.api.get(invitesPath(evt))).body.data.map((i: { email: string }) => i.email)).toEqual(['stay@example.test']);

    await team.api.put(eventPath(evt), { title: 'Planning', date_start: '2026-09-01 10:00', date_end: '2026-09-01 12:00', timezone: 'Europe/Berlin', send_invite_updates: true });
    // Invited again: the new invitation outranks the cancellation they had.
    await team.api.post(invitesPath(evt), { invitees: [{ email: 'GO@example.test' }] });
    const last = (await team.api.get(invitesPath(evt))).body.data;
    expect(last.map((i: { email: string }) => i.email)).toEqual(['stay@example.test', 'GO@example.test']);
    await team.api.delete(`${invitesPath(evt)}/${last[0].id}`);
    await team.api.delete(`${invitesPath(evt)}/${last[1].id}`);
    expect((await team.api.get(eventPath(evt))).body.data.has_calendar_invites).toBe(false);

    const rows = await deliveriesOf(evt);
    expect(rows.map((r) => [r.email.toLowerCase(), r.kind, r.sequence])).toEqual([
      ['stay@example.test', 'invitation', 0],
      ['go@example.test', 'invitation', 0],
      ['go@example.test', 'removal', 1],
      ['stay@example.test', 'update', 2],
      ['go@example.test', 'invitation', 2],
      ['stay@example.test', 'removal', 3],
      ['go@example.test', 'removal', 4],
    ]);
    // Per person, SEQUENCE only ever goes up.
    for (const email of ['stay@example.test', 'go@example.test']) {
      const seqs = rows.filter((r) => r.email.toLowerCase() === email).map((r) => r.sequence);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(seqs.length);
    }
  });
});

describe('when Redis cannot take the jobs', () => {
  it('answers 503 and stores nothing', async () => {
    const evt = await newEvent();
    // A gateway of its own whose request-path Redis connection is gone.
    const broken = await startGateway({ QUEUE_PREFIX: prefix });
    broken.redis.disconnect();
    try {
      const api = broken.anon.as(team.token);
      const res = await api.post(invitesPath(evt), { invitees: [{ email: 'lost@example.test' }] });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ message: 'Service temporarily unavailable.' });
      expect((await api.get(invitesPath(evt))).body.data).toEqual([]);
      expect(await deliveriesOf(evt)).toEqual([]);
      expect((await api.get(eventPath(evt))).body.data.has_calendar_invites).toBe(false);
    } finally {
      await broken.close();
    }
  });
});
