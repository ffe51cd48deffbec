import { Queue } from 'bullmq';
import { closeRedis, createRedis, whenReady } from '../../shared/queues/redis';
import { smartLinkJob } from '../../shared/queues/smart-link.job';
import { FaultTally } from '../helpers/fault-summary';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import type { Spawned } from '../helpers/processes';
import { crash, drained, isolatedPrefix, spawnWorker } from '../helpers/service-processes';
import { TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';
import { type Link, newLink, submitForm } from '../smart-links/helpers';

/**
 * Redis runs a submission's add, but its reply never reaches the gateway (a connection cut
 * at the wrong moment, a reply stuck behind a network fault). The job is stored: the sender
 * must not be told it was refused. The gateway reaches Redis through a proxy that drops
 * replies on demand; the worker talks to Redis directly.
 */
jest.setTimeout(120_000);

const prefix = isolatedPrefix('reply_lost');
let proxy: TcpProxy;
let gw: TestGateway;
let team: TestTeam;
let link: Link;
let queue: Queue;
const direct = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const procs: Spawned[] = [];

beforeAll(async () => {
  const target = new URL(process.env.TEST_REDIS_URL as string);
  proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
  gw = await startGateway({ QUEUE_PREFIX: prefix, REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
  procs.push(await spawnWorker('smart-link-worker', { QUEUE_PREFIX: prefix }));
  team = await gw.newTeam({ plan: 'unlimited' });
  ({ link } = await newLink(gw, team));
  queue = new Queue(smartLinkJob.queue, { connection: direct, prefix });
});
afterAll(async () => {
  for (const p of procs) await crash(p);
  await queue.obliterate({ force: true });
  await queue.close();
  await closeRedis(direct);
  await gw.close();
  await proxy.cut();
});

/** The events of the team with this title, and its submissions' statuses. */
async function eventsTitled(title: string) {
  const events = await gw.db('events').where({ team_id: team.teamId, title }).pluck('uid');
  const submissions = await gw.db('smart_link_submissions as s').join('events as e', 'e.id', 's.event_id').where({ 's.team_id': team.teamId, 'e.title': title }).pluck('s.status');
  return { events, submissions };
}

const stored = (title: string) => waitFor(async () => (await eventsTitled(title)).events.length > 0, { what: `the submission "${title}" stored and written`, timeoutMs: 20_000 });

it('a submission whose add ran but whose reply was lost is answered 202, and made once', async () => {
  const tally = new FaultTally('7a. Redis reply lost after a submission was stored', 'submission');
  proxy.mute();
  const answer = tally.send(() => submitForm(link.url, { title: 'Reply lost', start: '2030-07-01 10:00' }));
  // The add ran in Redis (the worker, on its own connection, has even written the event),
  // and its reply timed out: the gateway asks again (the same job, under the same id)…
  await stored('Reply lost');
  const asked = await Promise.race([answer.then(() => 'answered'), waitFor(() => proxy.timesAsked('Reply lost') >= 2 && 'asked again', { timeoutMs: 20_000 })]);
  expect(asked).toBe('asked again');
  // …and once the connection is back, the answer comes.
  await proxy.reconnect();
  const res = await answer;
  expect(res?.status).toBe(202);
  await waitFor(() => drained(queue), { what: 'the queue to drain' });
  const { events, submissions } = await eventsTitled('Reply lost');
  tally.lost = res?.status === 202 && events.length === 1 ? 0 : 1;
  tally.duplicated = Math.max(0, events.length - 1);
  tally.note = 'answered 202: the add is tried again under the same job id once the connection is back';
  tally.save();
  expect(events).toHaveLength(1);
  expect(submissions).toEqual(['processed']);
});

it('when the outcome stays unknown the answer is 503, and a retry with the same key or content makes no second event', async () => {
  const tally = new FaultTally('7b. Redis reply lost, Redis silent until the answer', 'submission');
  proxy.mute();
  const fields = { title: 'Unknown outcome', start: '2030-07-02 10:00' };
  const first = await tally.send(() => submitForm(link.url, fields, { 'Idempotency-Key': 'order-7b' }));
  await proxy.reconnect();
  // Nothing could tell whether it was stored: a refusal, with the documented retry advice.
  expect(first?.status).toBe(503);
  expect(first?.headers.get('retry-after')).toBeTruthy();
  await stored('Unknown outcome');
  await whenReady(gw.redis, 5000);
  const again = await tally.send(() => submitForm(link.url, fields, { 'Idempotency-Key': 'order-7b' }));
  const sameContent = await tally.send(() => submitForm(link.url, fields));
  expect([again?.status, sameContent?.status]).toEqual([202, 202]);
  await waitFor(() => drained(queue), { what: 'the queue to drain' });
  const { events, submissions } = await eventsTitled('Unknown outcome');
  tally.lost = events.length === 1 ? 0 : 1;
  tally.duplicated = Math.max(0, events.length - 1);
  tally.note = 'the 503 was stored; its retry under the same key is the same submission, the same content a duplicate of its event';
  tally.save();
  expect(events).toHaveLength(1);
  expect(submissions.sort()).toEqual(['duplicate', 'processed']);
});
