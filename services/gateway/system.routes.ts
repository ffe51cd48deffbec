import Joi from 'joi';
import type { Knex } from '../../shared/db/knex';
import { type Redis, whenReady } from '../../shared/queues/redis';
import { defineRoute, type RouteSpec } from './http/route';

const CHECK_TIMEOUT_MS = 2000;

async function check(probe: () => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

const readySchema = Joi.object({
  status: Joi.string().valid('ok', 'unavailable').required(),
  checks: Joi.object({
    postgres: Joi.string().valid('ok', 'unavailable').required(),
    redis: Joi.string().valid('ok', 'unavailable').required(),
  }).required(),
});

/** Liveness (the process answers) and readiness (its dependencies answer). */
export function systemRoutes(db: Knex, redis: Redis, isShuttingDown: () => boolean): RouteSpec[] {
  const tags = ['System'];
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'Liveness: the process is up',
      tags,
      auth: false,
      responses: { 200: { description: 'Alive', body: Joi.object({ status: Joi.string().valid('ok').required() }) } },
      handler: async (_input, _req, res) => {
        res.set('Cache-Control', 'no-store').json({ status: 'ok' });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'Readiness: Postgres and Redis are reachable',
      tags,
      auth: false,
      responses: {
        200: { description: 'Ready', body: readySchema },
        503: { description: 'A dependency is unreachable, or the process is shutting down', body: readySchema },
      },
      handler: async (_input, _req, res) => {
        const [postgres, redisState] = await Promise.all([check(() => db.raw('SELECT 1')), check(async () => {
          await whenReady(redis, CHECK_TIMEOUT_MS);
          await redis.ping();
        })]);
        const ready = postgres === 'ok' && redisState === 'ok' && !isShuttingDown();
        res
          .status(ready ? 200 : 503)
          .set('Cache-Control', 'no-store')
          .json({ status: ready ? 'ok' : 'unavailable', checks: { postgres, redis: redisState } });
      },
    }),
  ];
}
