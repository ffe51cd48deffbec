import { Cluster, type ClusterOptions, Redis as Server, type RedisOptions } from 'ioredis';
import { unavailable } from '../errors/app-error';

/**
 * Where Redis is: one server's URL, or the seed nodes of a Redis Cluster (URLs of any of
 * its nodes; the client learns the others and which slots each serves from them).
 */
export type RedisTarget = string | { cluster: string[] };

/**
 * A connection to Redis: to one server, or to a cluster, which sends each command to the
 * node serving its key's slot. BullMQ and rate-limiter-flexible take either.
 */
export type Redis = Server | Cluster;
export type { Server as RedisServer };

type Role = 'client' | 'worker';

const retryDelay = (role: Role) => (role === 'client' ? (times: number) => Math.min(times * 100, 500) : (times: number) => Math.min(times * 200, 2000));

/**
 * Redis connections. Request-path connections (`client`) fail fast while Redis is away
 * (no offline queue), so a submission becomes a quick 503 instead of a hung request, and
 * try to reconnect at least every half second, so the 503s stop soon after Redis is back;
 * worker connections (`worker`) wait and retry for as long as it takes, as BullMQ needs.
 * A cluster target gets a cluster client with the same behaviour per role.
 */
export function createRedis(target: string, role: Role, extra?: RedisOptions): Server;
export function createRedis(target: RedisTarget, role: Role, extra?: RedisOptions): Redis;
export function createRedis(target: RedisTarget, role: Role, extra: RedisOptions = {}): Redis {
  if (typeof target !== 'string') return createCluster(target.cluster, role, extra);
  const base: RedisOptions = {
    connectionName: `calendar-${role}`,
    retryStrategy: retryDelay(role),
    lazyConnect: false,
  };
  const roleOpts: RedisOptions =
    role === 'client'
      ? // Many requests run concurrently here: commands from one turn of the event loop go out as one write.
        { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 2000, enableAutoPipelining: true }
      : { enableOfflineQueue: true, maxRetriesPerRequest: null };
  return new Server(target, { ...base, ...roleOpts, ...extra });
}

/** What every node of a cluster is connected with: the first seed's credentials and TLS (config checks the seeds agree). */
function nodeOptions(seed: URL): RedisOptions {
  return {
    ...(seed.username ? { username: decodeURIComponent(seed.username) } : {}),
    ...(seed.password ? { password: decodeURIComponent(seed.password) } : {}),
    ...(seed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

const hostPort = (seed: URL) => ({ host: seed.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(seed.port || 6379) });

function createCluster(seeds: string[], role: Role, extra: RedisOptions): Cluster {
  const urls = seeds.map((s) => new URL(s));
  const { retryStrategy, ...nodeExtra } = extra;
  const options: ClusterOptions = {
    clusterRetryStrategy: retryStrategy === undefined ? retryDelay(role) : retryStrategy,
    lazyConnect: false,
    // Writes and reads go to the masters: a job read back from a replica could be older than
    // what was just written.
    scaleReads: 'master',
    // With TLS a seed's name must stay a name, or its certificate would be checked against
    // the address it resolved to.
    ...(urls[0].protocol === 'rediss:' ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
    redisOptions: {
      ...nodeOptions(urls[0]),
      connectionName: `calendar-${role}`,
      ...(role === 'client' ? { connectTimeout: 2000, commandTimeout: 2000, maxRetriesPerRequest: 1 } : { maxRetriesPerRequest: null }),
      ...nodeExtra,
    },
    ...(role === 'client'
      ? {
          // As for one server: no offline queue, commands of one turn pipelined. While a slot
          // has no master (CLUSTERDOWN) or its master is unreachable, a command is tried again
          // every 100 ms, 16 times at most (ioredis's redirection budget), then fails.
          enableOfflineQueue: false,
          enableAutoPipelining: true,
        }
      : { enableOfflineQueue: true }),
  };
  return new Cluster(urls.map(hostPort), options);
}

/**
 * A connection for SUBSCRIBE, whose 'ready' and 'close' say when messages can and cannot
 * arrive (a cache trusts itself only in between). On one server it is a worker connection.
 * On a cluster it is a connection to one node at a time: a message PUBLISHed on any node
 * of a cluster reaches the subscribers of every node. Each time it reconnects it moves to
 * the next seed, so a node that is gone for good does not keep it away.
 */
export function createSubscriber(target: RedisTarget, connectionName: string): Server {
  if (typeof target === 'string') return createRedis(target, 'worker', { connectionName });
  const seeds = target.cluster.map((s) => new URL(s));
  let next = 0;
  const sub: Server = new Server({
    ...nodeOptions(seeds[0]),
    ...hostPort(seeds[0]),
    connectionName,
    lazyConnect: false,
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    retryStrategy: (times) => {
      // The connection reads its host and port from its options at each connect.
      Object.assign(sub.options, hostPort(seeds[++next % seeds.length]));
      return retryDelay('worker')(times);
    },
  });
  return sub;
}

export const isCluster = (redis: Redis): redis is Cluster => redis instanceof Cluster;

/**
 * Room a Redis at its maxmemory must still have for readiness: the largest job the service
 * adds is half of this (a group of submissions), and below it adds start to be refused.
 */
const READY_HEADROOM_BYTES = 1024 * 1024;

/**
 * A small write under the prefix, then Redis's memory figures, in one script. It goes to
 * the master serving the prefix's slot (on a cluster a PING would be answered by any node,
 * even while that master is gone), and fails when Redis refuses writes (full, a failed
 * snapshot, a replica), which a PING does not show.
 */
const PROBE = `redis.call('SET', KEYS[1], '1', 'PX', 60000)
local info = redis.call('INFO', 'memory')
return {tonumber(string.match(info, 'used_memory:(%d+)')), tonumber(string.match(info, 'maxmemory:(%d+)'))}`;

/**
 * Answers once Redis can do this process's work: it takes writes, with READY_HEADROOM_BYTES
 * to spare under its maxmemory. Between refused adds a full Redis may take a small write, so
 * the write alone does not tell.
 */
export async function probeRedis(redis: Redis, queuePrefix: string): Promise<void> {
  const [used, max] = (await redis.eval(PROBE, 1, `${queuePrefix}:probe`)) as [number, number];
  if (max > 0 && used + READY_HEADROOM_BYTES > max) throw new Error(`Redis is full: ${used} of ${max} bytes used`);
}

/**
 * True for Redis refusing writes while it answers: full at its maxmemory with
 * noeviction (OOM), a failed snapshot (MISCONF), a replica or too few replicas. Nothing
 * can be queued until that ends, which is an outage, not a bad request.
 */
export function refusesWrites(err: unknown): boolean {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /^(?:OOM|MISCONF|READONLY|NOREPLICAS)\b/.test(message);
}

/**
 * Refuses at once (a 503 AppError) while the connection is not ready: without an offline
 * queue a command would fail anyway, and BullMQ would hold it until Redis is back, long
 * after the request that sent it was answered.
 */
export function requireReady(connection: Redis): void {
  if (connection.status !== 'ready') throw unavailable();
}

/** True when the error means Redis is out of reach (as opposed to a bad command). */
export function isRedisUnavailableError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { name?: string; message?: string; code?: string };
  // ClusterAllFailedError: no node answered a slots refresh.
  if (e.name === 'MaxRetriesPerRequestError' || e.name === 'ClusterAllFailedError') return true;
  if (refusesWrites(err)) return true;
  if (e.code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(e.code)) return true;
  if (/Stream isn't writeable|enableOfflineQueue|Connection is closed|Command timed out|connect ECONNREFUSED|READONLY|LOADING/i.test(e.message ?? '')) return true;
  // A cluster: a slot without a master, a master that is down or being failed over, a
  // topology the client could not refresh. A command that used up its redirections did so
  // on one of these (CROSSSLOT and other bad commands fail at once, as on one server).
  return /CLUSTERDOWN|MASTERDOWN|TRYAGAIN|Too many Cluster redirections|Failed to refresh slots cache|Cluster isn't ready|None of startup nodes is available|Cluster is ended|No subscriber for the cluster/.test(
    e.message ?? '',
  );
}

/**
 * True when a failed command may still have run in Redis: its reply timed out, or the
 * connection went away while it was in flight. (One refused before it was sent, with no
 * connection or a stream not writeable, or answered with an error reply, did not run.)
 */
export function mayHaveRun(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { name?: string; message?: string; code?: string };
  if (e.name === 'MaxRetriesPerRequestError') return true;
  if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return true;
  return /Command timed out|Connection is closed/i.test(e.message ?? '');
}

/**
 * BullMQ keeps its queues in Redis: under any eviction policy but noeviction, a Redis at
 * its maxmemory deletes queued jobs (accepted work) and the locks of active ones without a
 * word. Checked once connected (every master of a cluster), loudly; CONFIG may be refused
 * (managed Redis), which is said too.
 */
export function warnUnlessNoEviction(redis: Redis, logger: { error: (o: object, m: string) => void; info: (o: object, m: string) => void }): void {
  const check = async () => {
    const nodes = isCluster(redis) ? redis.nodes('master') : [redis];
    for (const node of nodes) {
      const [, policy] = ((await node.config('GET', 'maxmemory-policy')) as string[]) ?? [];
      if (policy !== undefined && policy !== 'noeviction') {
        logger.error(
          { policy, node: `${node.options.host}:${node.options.port}` },
          `Redis maxmemory-policy is ${policy}: a full Redis will delete queued jobs and lose accepted work; set maxmemory-policy noeviction`,
        );
      }
    }
  };
  const run = () => check().catch((err: Error) => logger.info({ err: err.message.slice(0, 200) }, 'could not read Redis maxmemory-policy; make sure it is noeviction'));
  if (redis.status === 'ready') void run();
  else redis.once('ready', () => void run());
}

/** Closes a connection, quickly even when the server is gone. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  try {
    await Promise.race([redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  } catch {
    // already closed
  }
  redis.disconnect();
}

/** Resolves once the connection is ready (a client without an offline queue rejects commands before that). */
export function whenReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error('redis not ready'));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}
