import type { Queue } from 'bullmq';
import { isRedisUnavailableError, type Redis } from '../queues/redis';

/**
 * Turns on the emails queue, fair between teams (start-time fair queuing): every team's
 * batches are numbered from where the queue is now, so each team's first pending batch
 * comes before any team's second, whatever was queued first. One team's 5,000-invitation
 * fan-out, or a hundred fan-outs of 50, then costs another team's single invitation one
 * batch of waiting per busy team, not the whole backlog.
 *
 * A job's BullMQ priority is its turn (lower runs first; equal turns run in queue order).
 * Redis holds, beside the queue's own keys (so in its hash slot):
 * - `<queue>:fair`, a hash: `v`, the turn of the latest batch a worker started (the queue's
 *   "now"), `hi`, the highest turn handed out, and `epoch`;
 * - `<queue>:fair:<team>`: `<epoch>:<turn>`, the team's last turn handed out (a day's TTL).
 * A team's next batches take the turns after max(now, its last turn): an idle team starts
 * at now, a busy one after its own backlog.
 *
 * Turns only grow, and BullMQ's priorities stop at 2^21: once now passes REBASE_AT and the
 * queue holds no prioritized job, numbering starts again at 0 in a new epoch (older team
 * turns then count for nothing). Turns past the limit are clamped to it, so a queue that is
 * never empty while that happens degrades to queue order, never to an error.
 */

const MAX_PRIORITY = 2_097_151; // BullMQ's highest priority (2^21 - 1)
const REBASE_AT = 1 << 20;
const TEAM_TTL_SECONDS = 86_400;

// KEYS: state hash, the team's key, the queue's prioritized set. ARGV: batches, team TTL, rebase point.
const TAKE_TURNS = `
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
local hi = tonumber(redis.call('HGET', KEYS[1], 'hi') or '0')
local epoch = redis.call('HGET', KEYS[1], 'epoch') or '0'
if v >= tonumber(ARGV[3]) and redis.call('ZCARD', KEYS[3]) == 0 then
  v = 0
  hi = 0
  epoch = tostring(tonumber(epoch) + 1)
  redis.call('HSET', KEYS[1], 'v', 0, 'hi', 0, 'epoch', epoch)
end
local start = v
local last = redis.call('GET', KEYS[2])
if last then
  local sep = string.find(last, ':', 1, true)
  if sep and string.sub(last, 1, sep - 1) == epoch then
    local turn = tonumber(string.sub(last, sep + 1))
    if turn and turn > start then start = turn end
  end
end
local finish = start + tonumber(ARGV[1])
redis.call('SET', KEYS[2], epoch .. ':' .. finish, 'EX', ARGV[2])
if finish > hi then redis.call('HSET', KEYS[1], 'hi', finish) end
return start
`;

// KEYS: state hash. ARGV: the turn of the batch a worker starts. Never past the turns of
// this epoch (a job of an earlier epoch, retried late, does not move now ahead).
const ADVANCE = `
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
local hi = tonumber(redis.call('HGET', KEYS[1], 'hi') or '0')
local now = tonumber(ARGV[1]) - 1
if now > hi then now = hi end
if now > v then redis.call('HSET', KEYS[1], 'v', now) end
return v
`;

const stateKey = (queueKey: string) => `${queueKey}:fair`;

/**
 * The BullMQ priority of each of a team's `batches` new batches, in order. When Redis cannot
 * answer, the batches are numbered from 1 (fan-outs still interleave batch by batch) and
 * the add that follows decides: refused while Redis is away, stored when only this reply
 * was lost.
 */
export async function teamTurns(producer: { queue: Queue; connection: Redis }, teamId: number, batches: number): Promise<number[]> {
  const { queue, connection } = producer;
  const queueKey = queue.qualifiedName;
  let start = 0;
  try {
    start = Number(await connection.eval(TAKE_TURNS, 3, stateKey(queueKey), `${stateKey(queueKey)}:${teamId}`, queue.keys.prioritized, batches, TEAM_TTL_SECONDS, REBASE_AT));
  } catch (err) {
    if (!isRedisUnavailableError(err)) throw err;
  }
  return Array.from({ length: batches }, (_, i) => Math.min(start + i + 1, MAX_PRIORITY));
}

/** Moves the queue's now to the turn of a batch a worker starts (its priority). */
export async function advanceTurn(redis: Redis, queueKey: string, priority: number | undefined): Promise<void> {
  if (!priority) return;
  await redis.eval(ADVANCE, 1, stateKey(queueKey), priority);
}
