import { Queue } from 'bullmq';
import { advanceTurn, teamTurns } from '../../shared/mail/mail-fairness';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { isolatedPrefix } from '../helpers/service-processes';

/**
 * The turns behind the emails queue's fairness (the mail itself: test/security/
 * mail-fairness.test.ts): where a team's batches start, how the present moves, and the
 * numbering starting again before BullMQ's priority limit.
 */
const prefix = isolatedPrefix('mail_turns');
const connection = createRedis(process.env.TEST_REDIS_URL as string, 'worker');
const queue = new Queue('emails', { connection, prefix });
const producer = { queue, connection };
const state = `${queue.qualifiedName}:fair`;

afterAll(async () => {
  const keys = await connection.keys(`${queue.qualifiedName}:*`);
  if (keys.length) await connection.del(...keys);
  await queue.close();
  await closeRedis(connection);
});

it('numbers a busy team after its own backlog and an idle one from the present', async () => {
  expect(await teamTurns(producer, 1, 3)).toEqual([1, 2, 3]);
  expect(await teamTurns(producer, 1, 2)).toEqual([4, 5]);
  expect(await teamTurns(producer, 2, 1)).toEqual([1]);
  // A worker starts turn 3: the present is 2. Team 2, idle, starts there; team 1 after its own.
  await advanceTurn(connection, queue.qualifiedName, 3);
  expect(await teamTurns(producer, 2, 1)).toEqual([3]);
  expect(await teamTurns(producer, 1, 1)).toEqual([6]);
  // A turn from past the ones handed out (an earlier epoch's job) moves the present no further than them.
  await advanceTurn(connection, queue.qualifiedName, 1_000_000);
  expect(await connection.hget(state, 'v')).toBe('6');
});

it('numbers from 0 again once the turns are high and the queue holds no prioritized job', async () => {
  await connection.hset(state, 'v', 1 << 20, 'hi', (1 << 20) + 5);
  expect(await teamTurns(producer, 1, 2)).toEqual([1, 2]);
  expect(await connection.hget(state, 'epoch')).toBe('1');
  // The team's turns of the earlier epoch count for nothing now.
  expect(await teamTurns(producer, 3, 1)).toEqual([1]);
});
