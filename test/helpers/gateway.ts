import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { createTeamWithOwner, type PlanId } from '../../shared/accounts/accounts.repository';
import { createSession, csrfTokenOf, sessionCookie } from '../../services/gateway/http/sessions';
import { type Config, loadConfig } from '../../shared/config/config';
import { createDb, type Knex } from '../../shared/db/knex';
import type { Clock } from '../../shared/lifecycle/clock';
import { createLogger } from '../../shared/logging/logger';
import { closeRedis, createRedis, type Redis, whenReady } from '../../shared/queues/redis';
import { randomBase62 } from '../../shared/ids/ids';
import { buildApp } from '../../services/gateway/app';
import type { ReadCaches } from '../../services/gateway/read-caches';
import { ApiClient } from './api-client';
import { OpenApiConformance } from './openapi-conformance';

/** A clock tests can stop and move; it follows real time until set. */
export class TestClock implements Clock {
  private fixed: number | null = null;
  now(): Date {
    return new Date(this.fixed ?? Date.now());
  }
  set(at: Date | string): void {
    this.fixed = new Date(at).getTime();
  }
  advance(ms: number): void {
    this.fixed = (this.fixed ?? Date.now()) + ms;
  }
  reset(): void {
    this.fixed = null;
  }
}

export function testEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (!databaseUrl) throw new Error('TEST_DATABASE_URL is not set: run the tests through jest (global setup)');
  return {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.TEST_REDIS_URL,
    QUEUE_PREFIX: process.env.TEST_QUEUE_PREFIX,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    APP_KEY: 'test-app-key-0123456789abcdef0123456789',
    DB_POOL_MAX: '5',
    // Workers serve /healthz, /readyz and /metrics on PORT: any free one, so processes never collide.
    PORT: '0',
    // The inbound-mail service's SMTP server too (its default, 2525, would be shared by every launcher a test starts).
    INBOUND_SMTP_PORT: '0',
    // Suites share the run's database and set their clocks back and forth: no worker prunes
    // records behind their backs (test/shared/retention.test.ts runs the pruning itself).
    SUBMISSION_RETENTION_DAYS: '0',
    EXTRACTION_RETENTION_DAYS: '0',
    DELIVERY_RETENTION_DAYS: '0',
    // Likewise reminders: a suite's worker would sweep another's events by its own clock. The
    // reminder tests sweep themselves, or set it for the process they start.
    REMINDER_SWEEP_MS: '0',
    // Per-address and per-calendar limits count every request from 127.0.0.1 under the run's
    // queue prefix, whichever suite sent it: left at their defaults, one suite's RSVPs,
    // subscribes or page views would use up another's budget, depending on the order they
    // ran in. Out of the way here; the tests of these limits set them low with a queue prefix
    // of their own.
    RSVP_RATE_PER_10_MINUTES: '1000000',
    SIGN_IN_RATE_PER_10_MINUTES: '1000000',
    SUBSCRIBE_RATE_PER_10_MINUTES: '1000000',
    SMART_LINK_BAD_SIGNATURES_PER_MINUTE: '1000000',
    PUBLIC_READ_RATE_PER_MINUTE: '1000000',
    PUBLIC_CALENDAR_READ_RATE_PER_MINUTE: '1000000',
    ...extra,
  };
}

export interface TestGateway {
  baseUrl: string;
  config: Config;
  db: Knex;
  redis: Redis;
  clock: TestClock;
  openapi: Record<string, unknown>;
  conformance: OpenApiConformance;
  app: Express;
  caches: ReadCaches;
  /** A client with no token. */
  anon: ApiClient;
  /** A new team (its own data, isolated from every other test) and a client with its token. */
  newTeam(opts?: { plan?: PlanId; eventLimit?: number | null; limits?: Partial<PlanRateLimitRow> }): Promise<TestTeam>;
  close(): Promise<void>;
}

/** A plan's per-minute request limits and email quotas as stored (null: none). */
export interface PlanRateLimitRow {
  api_per_minute_token: number | null;
  api_per_minute_team: number | null;
  extractions_per_minute: number | null;
  smart_link_per_minute: number | null;
  mail_per_day: number | null;
  mail_per_month: number | null;
  mail_per_recipient_per_day: number | null;
}

export interface TestTeam {
  api: ApiClient;
  /** The same team's owner through a dashboard session (made directly in the database, as a sign-in makes it). */
  session: ApiClient;
  token: string;
  teamId: number;
  userId: number;
  email: string;
}

/** The real gateway app on a free port, against the run's database and Redis. */
export async function startGateway(env: Record<string, string> = {}, options: { dashboardDir?: string } = {}): Promise<TestGateway> {
  let handler: http.RequestListener = (_req, res) => res.end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const config = loadConfig(testEnv({ PUBLIC_BASE_URL: baseUrl, ...env }));
  const db = createDb(config.databaseUrl, { poolMax: config.dbPoolMax });
  const redis = createRedis(config.redis, 'client');
  redis.on('error', () => undefined);
  const clock = new TestClock();
  const logger = createLogger('gateway-test', config.logLevel);
  const built = buildApp({ config, db, redis, logger, clock }, { dashboardDir: options.dashboardDir });
  // As a real gateway would be once /readyz says so; a test that closes it at once must not
  // cut the connection mid-handshake. A Redis that is not there is the test's business.
  await whenReady(redis, 5000).catch(() => undefined);
  handler = built.handler;
  const conformance = new OpenApiConformance(built.openapi as never);
  const anon = new ApiClient(baseUrl, null, conformance);

  return {
    baseUrl,
    config,
    db,
    redis,
    clock,
    openapi: built.openapi,
    conformance,
    app: built.app,
    caches: built.caches,
    anon,
    async newTeam(opts = {}) {
      const email = `owner-${randomBase62(10).toLowerCase()}@example.test`;
      let plan: string = opts.plan ?? 'business';
      if (opts.limits) {
        // A plan of its own (plans are rows an operator may add): the base plan with these limits.
        const base = await db('plans').where({ id: plan }).first();
        plan = `test_${randomBase62(8)}`;
        await db('plans').insert({ ...base, id: plan, name: `Test ${plan}`, created_at: db.fn.now(), ...opts.limits });
      }
      const created = await createTeamWithOwner(db, {
        name: `Team ${email}`,
        email,
        plan,
        eventLimit: opts.eventLimit ?? null,
      });
      const session = await createSession(db, { userId: created.userId, teamId: created.teamId }, new Date());
      const sessionApi = anon.asSession({ cookie: `${sessionCookie(config).name}=${session.secret}`, csrf: csrfTokenOf(config.appKey, session.secret) });
      return { api: anon.as(created.token), session: sessionApi, token: created.token, teamId: created.teamId, userId: created.userId, email };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await built.close();
      await db.destroy();
      await closeRedis(redis);
    },
  };
}
