import { extractionWorker } from '../../services/extraction-worker/extraction.worker';
import { DELIVERY_RECORDS, EXTRACTION_RECORDS, pruneOlderThan, startRetention, SUBMISSION_RECORDS, WEBHOOK_RECORDS } from '../../shared/db/retention';
import { createLogger } from '../../shared/logging/logger';
import { startGateway, TestClock, type TestGateway, type TestTeam } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import { startWorker, type TestWorker } from '../helpers/workers';
import { newLink, outcomeOf, startSmartLinkWorker, submitForm } from '../smart-links/helpers';

/**
 * SUBMISSION_RETENTION_DAYS, EXTRACTION_RETENTION_DAYS and DELIVERY_RETENTION_DAYS: old records go, the events
 * submissions made stay. The rows aged here are dated 2001 and pruned before 2002, so
 * suites running beside this one (whose clocks may sit anywhere after that) never lose a
 * row to it.
 */
let gw: TestGateway;
let team: TestTeam;
let smartLinks: TestWorker<unknown, unknown>;
let extractions: TestWorker<unknown, unknown>;

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam({ plan: 'unlimited' });
  smartLinks = (await startSmartLinkWorker()) as TestWorker<unknown, unknown>;
  extractions = (await startWorker((ctx) => extractionWorker(ctx))) as TestWorker<unknown, unknown>;
});
afterAll(async () => {
  await smartLinks.close();
  await extractions.close();
  await gw.close();
});

const CUTOFF = new Date('2002-01-01T00:00:00Z');
const LONG_AGO = '2001-06-01T00:00:00Z';
const submissionPath = (id: string) => `/api/smart-link-submissions/${id}`;

async function submitted(link: { url: string }, titles: string[]) {
  const ids: string[] = [];
  for (const title of titles) ids.push((await submitForm(link.url, { title, start: '2030-04-01 09:00' })).body.data.id);
  return Promise.all(ids.map((id) => outcomeOf(team, id)));
}

const ageSubmissions = (ids: string[]) =>
  gw.db('smart_link_submissions')
    .whereIn('uid', ids.map((id) => id.slice(4)))
    .update({ received_at: LONG_AGO });

describe('submission records', () => {
  it('are deleted once received before the cutoff; their events and newer records stay', async () => {
    const { link } = await newLink(gw, team);
    const [old1, old2, recent] = await submitted(link, ['Old one', 'Old two', 'Recent']);
    await ageSubmissions([old1.id, old2.id]);

    expect(await pruneOlderThan(gw.db, SUBMISSION_RECORDS, CUTOFF)).toBe(2);
    // Gone like an unknown id, although the finished job is still kept in Redis.
    expect((await team.api.get(submissionPath(old1.id))).status).toBe(404);
    expect((await team.api.get(submissionPath(recent.id))).body.data.status).toBe('processed');
    expect((await team.api.get(`/api/events/${old1.event_public_id}`)).body.data.title).toBe('Old one');
    expect(await pruneOlderThan(gw.db, SUBMISSION_RECORDS, CUTOFF)).toBe(0);
  });

  it('are left to the worker already pruning', async () => {
    const { link } = await newLink(gw, team);
    const [old] = await submitted(link, ['Held']);
    await ageSubmissions([old.id]);
    await gw.db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(?)', [SUBMISSION_RECORDS.lockKey]);
      expect(await pruneOlderThan(gw.db, SUBMISSION_RECORDS, CUTOFF)).toBe(0);
    });
    expect(await pruneOlderThan(gw.db, SUBMISSION_RECORDS, CUTOFF)).toBe(1);
  });

  it('go on the schedule with the configured days, and never with 0', async () => {
    const { link } = await newLink(gw, team);
    const [old] = await submitted(link, ['Scheduled']);
    await ageSubmissions([old.id]);
    const clock = new TestClock();
    clock.set(new Date(CUTOFF.getTime() + 30 * 86_400_000)); // 30 days after the cutoff
    const ctx = { db: gw.db, clock, logger: createLogger('retention-test', 'silent') };

    const off = startRetention(ctx, SUBMISSION_RECORDS, 0, { firstAfterMs: 0, everyMs: 10 });
    expect(off.scheduled).toBe(false);
    await off.stop();
    expect((await team.api.get(submissionPath(old.id))).status).toBe(200);

    const on = startRetention(ctx, SUBMISSION_RECORDS, 30, { firstAfterMs: 0, everyMs: 60_000 });
    try {
      await waitFor(async () => (await team.api.get(submissionPath(old.id))).status === 404, { what: 'the old record pruned' });
    } finally {
      await on.stop();
    }
  });
});

describe('extractions', () => {
  it('are deleted once finished before the cutoff; pending ones stay', async () => {
    const done = (await team.api.post('/api/events/extract?wait=10', { text: 'Lunch with Sam tomorrow at 1pm', timezone: 'UTC' })).body.data;
    expect(done.status).toBe('completed');
    const recent = (await team.api.post('/api/events/extract?wait=10', { text: 'Standup tomorrow at 9am', timezone: 'UTC' })).body.data;
    const rows = gw.db('extractions').where({ team_id: team.teamId });
    await rows.clone().whereIn('uid', [done.id.slice(4)]).update({ created_at: LONG_AGO });
    // A pending one, however old, is someone's open request.
    const [pending] = await rows.clone().insert({ uid: 'PendingLongAgo01', team_id: team.teamId, status: 'pending', text: 'Old pending text', timezone: 'UTC', reference_date: LONG_AGO, created_at: LONG_AGO }).returning('uid');

    expect(await pruneOlderThan(gw.db, EXTRACTION_RECORDS, CUTOFF)).toBe(1);
    expect((await team.api.get(`/api/events/extract/${done.id}`)).status).toBe(404);
    expect((await team.api.get(`/api/events/extract/${recent.id}`)).body.data.status).toBe('completed');
    expect((await team.api.get(`/api/events/extract/ext_${pending.uid}`)).body.data.status).toBe('pending');
    await rows.clone().where({ uid: pending.uid }).delete();
  });
});

describe('email delivery records', () => {
  it('are deleted once their event is over (ended or deleted) before the cutoff; messages of live events and unsent ones stay', async () => {
    const cal = (await team.api.post('/api/calendars', { name: 'Mail', timezone: 'UTC' })).body.data;
    const event = async (body: Record<string, unknown>) => {
      const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'E', timezone: 'UTC', ...body });
      expect(res.status).toBe(200);
      return (await gw.db('events').where({ uid: res.body.data.uid }).first('id')).id as number;
    };
    const ended = await event({ date_start: '2001-05-01 10:00', date_end: '2001-05-01 11:00' });
    const repeating = await event({ date_start: '2001-05-01 10:00', date_end: '2001-05-01 11:00', recurrence_rule: 'FREQ=WEEKLY' });
    const deletedRepeating = await event({ date_start: '2001-05-01 10:00', date_end: '2001-05-01 11:00', recurrence_rule: 'FREQ=WEEKLY' });
    const ahead = await event({ date_start: '2030-05-01 10:00', date_end: '2030-05-01 11:00' });
    await gw.db('events').where({ id: deletedRepeating }).update({ deleted_at: LONG_AGO });
    const row = (eventId: number, email: string, status: string) => ({ team_id: team.teamId, event_id: eventId, email, kind: 'invitation', sequence: 0, status, created_at: LONG_AGO });
    await gw.db('deliveries').insert([
      row(ended, 'gone@example.test', 'sent'),
      row(ended, 'failed@example.test', 'failed'),
      row(ended, 'unsent@example.test', 'queued'),
      row(repeating, 'repeats@example.test', 'sent'),
      row(deletedRepeating, 'deleted@example.test', 'sent'),
      row(ahead, 'ahead@example.test', 'sent'),
    ]);

    expect(await pruneOlderThan(gw.db, DELIVERY_RECORDS, CUTOFF)).toBe(3);
    const left = await gw.db('deliveries').whereIn('event_id', [ended, repeating, deletedRepeating, ahead]).orderBy('email').pluck('email');
    expect(left).toEqual(['ahead@example.test', 'repeats@example.test', 'unsent@example.test']);
    await gw.db('deliveries').whereIn('event_id', [ended, repeating, deletedRepeating, ahead]).delete();
  });
});

describe('webhook deliveries', () => {
  it('go with their message once none is pending; a pending one keeps its message', async () => {
    const hook = (await team.api.post('/api/webhooks', { url: 'https://hooks.example.com/retention' })).body.data;
    // No webhook worker runs here: both stay pending until one is marked done.
    const done = (await team.api.post(`/api/webhooks/${hook.id}/test`, {})).body.data.delivery_id as string;
    const pending = (await team.api.post(`/api/webhooks/${hook.id}/test`, {})).body.data.delivery_id as string;
    const uids = [done, pending].map((id) => id.slice(4));
    await gw.db('webhook_deliveries').where({ uid: uids[0] }).update({ status: 'succeeded' });
    const messages = gw.db('webhook_deliveries').whereIn('uid', uids).select('message_id');
    await gw.db('webhook_messages').whereIn('id', messages).update({ created_at: LONG_AGO });

    expect(await pruneOlderThan(gw.db, WEBHOOK_RECORDS, CUTOFF)).toBe(1);
    const left = (await team.api.get(`/api/webhooks/${hook.id}/deliveries`)).body.data.map((d: { id: string }) => d.id);
    expect(left).toEqual([pending]);
    await gw.db('webhook_deliveries').where({ uid: uids[1] }).update({ status: 'failed' }); // not to be sent by another suite's worker
  });
});
