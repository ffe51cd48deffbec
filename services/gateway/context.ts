import type { Config } from '../../shared/config/config';
import type { Knex } from '../../shared/db/knex';
import type { Clock } from '../../shared/lifecycle/clock';
import type { Logger } from '../../shared/logging/logger';
import type { Redis } from '../../shared/queues/redis';
import type { BatchedCounter } from './counters';
import type { Analytics } from './analytics/analytics';
import type { PlanRateLimits } from './http/rate-limits';
import type { HttpMetrics } from './http/http-metrics';
import type { Metrics } from '../../shared/metrics/metrics';
import type { GatewayQueues } from './queues';
import type { ReadCaches } from './read-caches';

/** What the gateway's features are built from; main.ts makes the real ones, tests their own. */
export interface GatewayDeps {
  config: Config;
  db: Knex;
  redis: Redis;
  logger: Logger;
  clock: Clock;
  /** The process's metrics; buildApp makes a registry of its own when none is given. */
  metrics?: Metrics;
}

/** What features receive: the dependencies plus the read caches the app keeps. */
export interface AppContext extends GatewayDeps {
  caches: ReadCaches;
  queues: GatewayQueues;
  counters: { dynamicLinkUses: BatchedCounter; subscriberSyncs: BatchedCounter; eventsCreated: BatchedCounter<string> };
  /** The plans' request limits (API, extraction, smart links), shared through Redis. */
  limits: PlanRateLimits;
  /** Page views, adds to calendars, feed fetches and RSVPs, counted in memory and written every few seconds. */
  analytics: Analytics;
  metrics: Metrics;
  httpMetrics: HttpMetrics;
}
