import { pruneSubmissions, startRetention } from '../../services/smart-link-worker/retention';
import { createLogger } from '../../shared/logging/logger';
import { startGateway, TestClock, type TestGateway, type TestTeam } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import type { TestWorker } from '../helpers/workers';
import { newLink, outcomeOf, startSmartLinkWorker, submitForm } from './helpers';

/**
 * SUBMISSION_RETENTION_DAYS: old submission records go, the events they made stay. The
 * records aged here are dated 2001 and pruned before 2002, so suites running beside this
 * one (whose clocks may sit anywhere after that) never lose a record to it.
 */
let gw: TestGateway;
let team: TestTeam;
let worker: TestWorker<unknown, unknown>;

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
  worker = (await startSmartLinkWorker()) as TestWorker<unknown, unknown>;
});
afterAll(async () => {
  await worker.close();
  await gw.close();
});

const submissionPath = (id: string) => `/api/smart-link-submissions/${id}`;
const CUTOFF = new Date('2002-01-01T00:00:00Z');

async function submitted(link: { url: string }, titles: string[]) {
  const ids: string[] = [];
  for (const title of titles) ids.push((await submitForm(link.url, { title, start: '2030-04-01 09:00' })).body.data.id);
  return Promise.all(ids.map((id) => outcomeOf(team, id)));
}

const age = (ids: string[]) =>
  gw.db('smart_link_submissions')
    .whereIn('uid', ids.map((id) => id.slice(4)))
    .update({ received_at: '2001-06-01T00:00:00Z' });

it('deletes the records received before the cutoff and keeps their events and the newer records', async () => {
  const { link } = await newLink(gw, team);
  const [old1, old2, recent] = await submitted(link, ['Old one', 'Old two', 'Recent']);
  await age([old1.id, old2.id]);

  expect(await pruneSubmissions(gw.db, CUTOFF)).toBe(2);
  expect((await team.api.get(submissionPath(old1.id))).status).toBe(404);
  expect((await team.api.get(submissionPath(recent.id))).body.data.status).toBe('processed');
  // The events the old submissions made are still there.
  expect((await team.api.get(`/api/events/${old1.event_public_id}`)).body.data.title).toBe('Old one');
  expect(await pruneSubmissions(gw.db, CUTOFF)).toBe(0);
});

it('leaves the work to the worker already pruning', async () => {
  const { link } = await newLink(gw, team);
  const [old] = await submitted(link, ['Held']);
  await age([old.id]);
  await gw.db.transaction(async (trx) => {
    await trx.raw("SELECT pg_advisory_xact_lock(x'736c7072'::int)");
    expect(await pruneSubmissions(gw.db, CUTOFF)).toBe(0);
  });
  expect(await pruneSubmissions(gw.db, CUTOFF)).toBe(1);
});

it('runs on its schedule with the configured days, and not at all with 0', async () => {
  const { link } = await newLink(gw, team);
  const [old] = await submitted(link, ['Scheduled']);
  await age([old.id]);
  const clock = new TestClock();
  clock.set(new Date(CUTOFF.getTime() + 30 * 86_400_000)); // 30 days after the cutoff
  const logger = createLogger('retention-test', 'silent');

  const off = startRetention({ db: gw.db, clock, logger, config: { submissionRetentionDays: 0 } }, { firstAfterMs: 0, everyMs: 10 });
  await new Promise((resolve) => setTimeout(resolve, 100));
  await off.stop();
  expect((await team.api.get(submissionPath(old.id))).status).toBe(200);

  const on = startRetention({ db: gw.db, clock, logger, config: { submissionRetentionDays: 30 } }, { firstAfterMs: 0, everyMs: 60_000 });
  try {
    await waitFor(async () => (await team.api.get(submissionPath(old.id))).status === 404, { what: 'the old record pruned' });
  } finally {
    await on.stop();
  }
});
