import net from 'node:net';

/**
 * Where the tests find Postgres and Redis (docs/testing.md): DATABASE_URL / REDIS_URL when set;
 * else the local defaults when reachable; else testcontainers when a Docker engine answers;
 * else a clear message saying what to start.
 */
export interface TestServices {
  postgresUrl: string; // server URL; the run creates its own database on it
  redisUrl: string;
  stop: () => Promise<void>;
}

const LOCAL_PG = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_REDIS = 'redis://127.0.0.1:6379';

function reachable(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const hostPort = (url: string, defaultPort: number) => {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || defaultPort) };
};

export async function resolveTestServices(): Promise<TestServices> {
  const stops: Array<() => Promise<void>> = [];
  let postgresUrl = process.env.DATABASE_URL;
  let redisUrl = process.env.REDIS_URL;

  if (!postgresUrl) {
    const { host, port } = hostPort(LOCAL_PG, 5432);
    if (await reachable(host, port)) postgresUrl = LOCAL_PG;
  }
  if (!redisUrl) {
    const { host, port } = hostPort(LOCAL_REDIS, 6379);
    if (await reachable(host, port)) redisUrl = LOCAL_REDIS;
  }
  if (!postgresUrl || !redisUrl) {
    const containers = await startContainers(!postgresUrl, !redisUrl);
    postgresUrl ??= containers.postgresUrl;
    redisUrl ??= containers.redisUrl;
    stops.push(containers.stop);
  }
  return {
    postgresUrl: postgresUrl as string,
    redisUrl: redisUrl as string,
    stop: async () => {
      for (const stop of stops) await stop();
    },
  };
}

async function startContainers(needPg: boolean, needRedis: boolean) {
  let testcontainers: typeof import('testcontainers');
  try {
    testcontainers = await import('testcontainers');
    await testcontainers.getContainerRuntimeClient();
  } catch (err) {
    throw new Error(
      [
        'Tests need PostgreSQL and Redis.',
        needPg ? '  - PostgreSQL is not reachable on 127.0.0.1:5432 and DATABASE_URL is not set.' : '',
        needRedis ? '  - Redis is not reachable on 127.0.0.1:6379 and REDIS_URL is not set.' : '',
        `  - No Docker engine for testcontainers either (${(err as Error).message.split('\n')[0]}).`,
        'Start them (see docs/testing.md), or set DATABASE_URL / REDIS_URL.',
      ]
        .filter(Boolean)
        .join('\n'),
      { cause: err },
    );
  }
  const stops: Array<() => Promise<void>> = [];
  let postgresUrl: string | undefined;
  let redisUrl: string | undefined;
  if (needPg) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const pg = await new PostgreSqlContainer('postgres:15-alpine').start();
    postgresUrl = pg.getConnectionUri();
    stops.push(async () => void (await pg.stop()));
  }
  if (needRedis) {
    const { RedisContainer } = await import('@testcontainers/redis');
    const redis = await new RedisContainer('redis:7-alpine').start();
    redisUrl = redis.getConnectionUrl();
    stops.push(async () => void (await redis.stop()));
  }
  return {
    postgresUrl,
    redisUrl,
    stop: async () => {
      for (const stop of stops) await stop();
    },
  };
}
