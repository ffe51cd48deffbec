import type { RequestListener } from 'node:http';
import { deploymentOf } from '../../shared/db/deployment';
import { sessionCookie } from './http/sessions';
import express, { type Express } from 'express';
import { accountRoutes } from './account/account.routes';
import { queueBoard } from './admin/queue-board';
import { calendarRoutes } from './calendars/calendars.routes';
import { webhookRoutes } from './webhooks/webhooks.routes';
import type { AppContext, GatewayDeps } from './context';
import { dashboardApp } from './dashboard/dashboard.routes';
import { docsAssets, docsRoutes } from './docs/docs.routes';
import { buildOpenApi } from './docs/openapi';
import { eventRoutes } from './events/events.routes';
import { ExtractionWaiter } from './extractions/extraction-waiter';
import { extractionRoutes } from './extractions/extractions.routes';
import { apiRateLimit, authenticate } from './http/auth';
import type { TrustProxy } from './http/client-address';
import { PlanRateLimits } from './http/rate-limits';
import { HttpMetrics } from './http/http-metrics';
import { Metrics } from '../../shared/metrics/metrics';
import { queueDepthGauge } from '../../shared/metrics/queue-metrics';
import { inviteRoutes } from './invites/invites.routes';
import { jsonBody } from './http/body';
import { answerOptions, apiNotFound, errorHandler, methodNotAllowed, pageNotFound } from './http/errors';
import { requestContext } from './http/request-context';
import { listenForInvalidations } from '../../shared/cache/invalidation';
import { BatchedCounter } from './counters';
import { Analytics } from './analytics/analytics';
import { analyticsRoutes } from './analytics/analytics.routes';
import { suppressionRoutes } from './invites/suppressions.routes';
import { addUses } from './dynamic-links/dynamic-links.repository';
import { addSyncs } from './subscribers/subscribers.repository';
import { addUsage } from '../../shared/usage/event-limit';
import { dynamicLinkRoutes } from './dynamic-links/dynamic-links.routes';
import { GatewayQueues } from './queues';
import { ReadCaches } from './read-caches';
import { mountRoutes, type RouteSpec } from './http/route';
import { publicRoutes } from './public/public.routes';
import { createIngest } from './smart-links/ingest/ingest';
import { rsvpRoutes } from './rsvps/rsvps.routes';
import { unsubscribeRoutes } from './reminders/reminders.routes';
import { smartLinkRoutes } from './smart-links/smart-links.routes';
import { subscriberRoutes } from './subscribers/subscribers.routes';
import { systemRoutes } from './system.routes';
import { memberRoutes } from './team/members.routes';
import { sessionRoutes } from './team/sessions.routes';
import { tokenRoutes } from './team/tokens.routes';

interface GatewayApp {
  app: Express;
  /** The server's request listener: smart-link submissions go to the ingest path, the rest to the app. */
  handler: RequestListener;
  routes: RouteSpec[];
  openapi: Record<string, unknown>;
  caches: ReadCaches;
  /** Lets requests waiting for a result answer now; call first when shutting down. */
  releaseWaits(): void;
  /** Closes what the app opened itself (the token-revocation subscription). */
  close(): Promise<void>;
}

interface BuildOptions {
  isShuttingDown?: () => boolean;
  /** Where the built dashboard is (default dist/dashboard), served at /app. */
  dashboardDir?: string;
}

/** The Express app with every route; no listen (main.ts and tests do that). */
export function buildApp(deps: GatewayDeps, opts: BuildOptions = {}): GatewayApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // API bodies change per request; public feeds set their own validators
  app.set('trust proxy', deps.config.trustProxy);
  app.set('query parser', 'simple');

  const metrics = deps.metrics ?? new Metrics('gateway');
  const httpMetrics = new HttpMetrics(metrics);
  app.use(requestContext(deps.logger, httpMetrics));
  app.use((_req, res, next) => {
    res.set('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.use('/docs/assets', docsAssets()); // mounted: other requests pass it with one prefix test
  app.use('/api', jsonBody);

  const caches = new ReadCaches(deps.redis, deps.config.queuePrefix, deps.logger);
  const stopListening = listenForInvalidations(deps.config.redis, deps.config.queuePrefix, caches, deps.logger);
  const deployment = deploymentOf(deps.db);
  // Read now, so the first jobs are stamped (until it is read, jobs go unstamped: any worker takes them).
  deployment.get().catch((err: Error) => deps.logger.warn({ err: err.message }, 'could not read the deployment id yet'));
  const queues = new GatewayQueues(deps.redis, deps.config.queuePrefix, deps.logger, deployment);
  const counters = {
    dynamicLinkUses: new BatchedCounter((rows) => addUses(deps.db, rows), 2000, deps.logger),
    subscriberSyncs: new BatchedCounter((rows) => addSyncs(deps.db, rows), 2000, deps.logger),
    // Events of teams without a limit (no reservation taken, see take_event_slots).
    eventsCreated: new BatchedCounter<string>((rows) => addUsage(deps.db, rows), 2000, deps.logger),
  };
  const limits = new PlanRateLimits(deps.redis, deps.config.queuePrefix);
  const analytics = new Analytics(deps.db, deps.logger, deps.clock, deps.config.analyticsEnabled, new URL(deps.config.publicBaseUrl).hostname);
  const ctx: AppContext = { ...deps, caches, queues, counters, limits, analytics, metrics, httpMetrics };
  queueDepthGauge(metrics, () => queues.all());
  const extractionWaiter = new ExtractionWaiter(deps.config.redis, deps.config.queuePrefix, deps.logger);

  let openapi: Record<string, unknown> = {};
  const routes: RouteSpec[] = [
    ...systemRoutes(deps.db, deps.redis, deps.config.queuePrefix, opts.isShuttingDown ?? (() => false), metrics, deps.config.metricsToken, deps.config.publicBaseUrl),
    ...docsRoutes(() => openapi),
    ...accountRoutes(ctx),
    ...sessionRoutes(ctx),
    ...tokenRoutes(ctx),
    ...memberRoutes(ctx),
    ...calendarRoutes(ctx),
    ...webhookRoutes(ctx),
    ...analyticsRoutes(ctx),
    ...suppressionRoutes(ctx),
    // Before the events routes: /api/events/extract is not an event id.
    ...extractionRoutes(ctx, extractionWaiter),
    ...eventRoutes(ctx),
    // Before the public routes: GET /e/{uid}/rsvp is the answer link, not a platform key.
    ...rsvpRoutes(ctx),
    ...unsubscribeRoutes(ctx),
    ...publicRoutes(ctx),
    ...dynamicLinkRoutes(ctx),
    ...smartLinkRoutes(ctx),
    ...subscriberRoutes(ctx),
    ...inviteRoutes(ctx),
  ];
  openapi = buildOpenApi(routes, {
    title: 'Calendar service',
    version: '1.0.0',
    description:
      'Calendars and events over JSON, with add-to-calendar links for every platform. Authenticate with `Authorization: Bearer <token>`. Errors: `{"message": …}`; validation errors (422) add `errors: {field: [messages]}`.',
    serverUrl: deps.config.publicBaseUrl,
  });
  app.use(answerOptions(routes));
  const cookieName = sessionCookie(deps.config).name;
  const auth = authenticate({ db: deps.db, logger: deps.logger, clock: deps.clock, cache: caches.tokens, appKey: deps.config.appKey, cookieName });
  mountRoutes(app, routes, { authenticate: auth, rateLimit: apiRateLimit(limits) });

  if (deps.config.adminToken) app.use(queueBoard(queues.all(), deps.config.adminToken));
  app.use('/app', dashboardApp(opts.dashboardDir));
  app.use(methodNotAllowed(routes));
  app.use('/api', apiNotFound);
  app.use(pageNotFound);
  app.use(errorHandler);
  // The ingest path finds a client's address as req.ip does, with the same TRUST_PROXY.
  const ingest = createIngest(ctx, { trustProxy: app.get('trust proxy fn') as TrustProxy });
  const handler: RequestListener = (req, res) => (ingest.matches(req) ? ingest.handle(req, res) : app(req, res));
  const close = async () => {
    await ingest.close();
    await stopListening();
    await extractionWaiter.close();
    await queues.close();
    await Promise.all([counters.dynamicLinkUses.flush(), counters.subscriberSyncs.flush(), counters.eventsCreated.flush(), analytics.flush()]);
  };
  return { app, handler, routes, openapi, caches, releaseWaits: () => extractionWaiter.release(), close };
}
