import { Queue } from 'bullmq';
import { smartLinkWorker } from '../../services/smart-link-worker/smart-link.worker';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, type TestGateway } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { crash, drained, type GatewayProcess, isolatedPrefix, spawnGateway } from '../helpers/service-processes';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';
import { newLink, outcomeOf, submitForm } from '../smart-links/helpers';
import { auditSubmissions } from './fault-checks';

/**
 * The gateway as its own process, killed with SIGKILL in the middle of a smart-link flood.
 * A 202 is only sent once Redis holds the job, so every submission that got one must become
 * exactly one event once a worker drains the queue; the ones that got no answer may or may
 * not have been queued, but none may be there twice.
 */
jest.setTimeout(120_000);

const prefix = isolatedPrefix('gateway_kill');
// The team's plan is unlimited, so the flood meets no per-link rate limit (tested on its own).
const env = { QUEUE_PREFIX: prefix };
const FLOOD = 2000;
const CLIENTS = 50;
const KILL_AFTER = 400;
const form = (i: number) => ({ title: `Flood ${i}`, start: '2030-05-01 10:00', duration: '30' });

let gw: TestGateway;
let queue: Queue;
const procs: Spawned[] = [];
let worker: { close(): Promise<void> } | null = null;

beforeAll(async () => {
  gw = await startGateway(env);
  queue = new Queue(smartLinkJob.queue, { connection: gw.redis, prefix });
});
afterAll(async () => {
  for (const p of procs) await crash(p);
  await worker?.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await gw.close();
});

it('SIGKILL mid-flood: every 202 is exactly one event, nothing is there twice, a new gateway serves', async () => {
  const tally = new FaultTally('1. gateway SIGKILL during a smart-link flood', 'submission');
  const team = await gw.newTeam({ plan: 'unlimited' });
  const { link } = await newLink(gw, team);
  const first: GatewayProcess = await spawnGateway(env);
  procs.push(first);
  const url = `${first.baseUrl}/s/${link.key}`;

  // CLIENTS senders, each sending its next submission as soon as the last is answered,
  // until one goes unanswered (the gateway is gone).
  const accepted = new Map<string, number>(); // sls id → which submission
  let next = 0;
  const sender = async () => {
    while (next < FLOOD) {
      const i = next++;
      const res = await tally.send(() => submitForm(url, form(i)));
      if (!res) return;
      if (res.status === 202) accepted.set(res.body.data.id as string, i);
    }
  };
  const flood = Promise.all(Array.from({ length: CLIENTS }, sender));
  await waitFor(() => accepted.size >= KILL_AFTER, { what: `${KILL_AFTER} submissions accepted`, timeoutMs: 60_000 });
  await crash(first);
  await flood;
  // The kill landed mid-flood: every sender had a request cut off.
  expect(tally.unanswered).toBe(CLIENTS);
  expect(tally.rejected).toEqual({});

  // A worker drains what the dead gateway queued.
  worker = await startWorker(smartLinkWorker, env);
  // Jobs leave the queue only once their rows are committed: drained means written.
  await waitFor(() => drained(queue), { what: 'the queue to drain', timeoutMs: 60_000 });
  const titles = new Map([...accepted].map(([id, i]) => [id, form(i).title]));
  const audit = await auditSubmissions(gw.db, team.teamId, titles);
  Object.assign(tally, { lost: audit.lost, duplicated: audit.duplicated });
  tally.note = `${audit.unacceptedStored} of the ${tally.unanswered} unanswered submissions had been queued before the kill and became events (allowed, once)`;
  tally.save();
  expect(audit).toEqual({ lost: 0, duplicated: 0, unacceptedStored: expect.any(Number) });
  expect(audit.unacceptedStored).toBeLessThanOrEqual(tally.unanswered);
  expect(await queue.getFailedCount()).toBe(0);

  // A gateway started again on the same port serves at once.
  const second = await spawnGateway(env, first.port);
  procs.push(second);
  expect((await fetch(`${second.baseUrl}/readyz`)).status).toBe(200);
  const after = await submitForm(url, form(FLOOD));
  expect(after.status).toBe(202);
  expect(await outcomeOf(team, after.body.data.id)).toMatchObject({ status: 'processed' });
  second.proc.kill('SIGTERM');
  expect((await second.exited).code).toBe(0);
});
