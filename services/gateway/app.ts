import express, { type Express } from 'express';
import { accountRoutes } from './account/account.routes';
import { calendarRoutes } from './calendars/calendars.routes';
import type { AppContext, GatewayDeps } from './context';
import { docsAssets, docsRoutes } from './docs/docs.routes';
import { buildOpenApi } from './docs/openapi';
import { eventRoutes } from './events/events.routes';
import { authenticate } from './http/auth';
import { inviteRoutes } from './invites/invites.routes';
import { jsonBody } from './http/body';
import { apiNotFound, errorHandler } from './http/errors';
import { requestContext } from './http/request-context';
import { listenForInvalidations } from '../../shared/cache/invalidation';
import { GatewayQueues } from './queues';
import { ReadCaches } from './read-caches';
import { mountRoutes, type RouteSpec } from './http/route';
import { systemRoutes } from './system.routes';

export interface GatewayApp {
  app: Express;
  routes: RouteSpec[];
  openapi: Record<string, unknown>;
  caches: ReadCaches;
  /** Closes what the app opened itself (the token-revocation subscription). */
  close(): Promise<void>;
}

export interface BuildOptions {
  isShuttingDown?: () => boolean;
}

/** The Express app with every route; no listen (main.ts and tests do that). */
export function buildApp(deps: GatewayDeps, opts: BuildOptions = {}): GatewayApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // API bodies change per request; public feeds set their own validators
  app.set('trust proxy', deps.config.trustProxy);
  app.set('query parser', 'simple');

  app.use(requestContext(deps.logger));
  app.use((_req, res, next) => {
    res.set('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.use(docsAssets());
  app.use('/api', jsonBody);

  const caches = new ReadCaches(deps.redis, deps.config.queuePrefix, deps.logger);
  const stopListening = listenForInvalidations(deps.config.redisUrl, deps.config.queuePrefix, caches, deps.logger);
  const queues = new GatewayQueues(deps.redis, deps.config.queuePrefix, deps.logger);
  const ctx: AppContext = { ...deps, caches, queues };

  let openapi: Record<string, unknown> = {};
  const routes: RouteSpec[] = [
    ...systemRoutes(deps.db, deps.redis, opts.isShuttingDown ?? (() => false)),
    ...docsRoutes(() => openapi),
    ...accountRoutes(ctx),
    ...calendarRoutes(ctx),
    ...eventRoutes(ctx),
    ...inviteRoutes(ctx),
  ];
  openapi = buildOpenApi(routes, {
    title: 'Calendar service',
    version: '1.0.0',
    description:
      'Calendars and events over JSON, with add-to-calendar links for every platform. Authenticate with `Authorization: Bearer <token>`. Errors: `{"message": …}`; validation errors (422) add `errors: {field: [messages]}`.',
    serverUrl: deps.config.publicBaseUrl,
  });
  mountRoutes(app, routes, { authenticate: authenticate(deps.db, deps.logger, caches.tokens) });

  app.use('/api', apiNotFound);
  app.use((_req, res) => {
    res.status(404).json({ message: 'Not found.' });
  });
  app.use(errorHandler);
  const close = async () => {
    await stopListening();
    await queues.close();
  };
  return { app, routes, openapi, caches, close };
}
