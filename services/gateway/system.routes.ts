import Joi from 'joi';
import type { Knex } from '../../shared/db/knex';
import { type Readiness, readiness } from '../../shared/lifecycle/health';
import type { Metrics } from '../../shared/metrics/metrics';
import { metricsAnswer } from '../../shared/metrics/metrics';
import type { Redis } from '../../shared/queues/redis';
import { messageSchema } from './http/responses';
import { defineRoute, type RouteSpec } from './http/route';
import { landingPage, pageCsp } from './public/views';

const readySchema = Joi.object({
  status: Joi.string().valid('ok', 'unavailable').required(),
  checks: Joi.object({
    postgres: Joi.string().valid('ok', 'unavailable').required(),
    redis: Joi.string().valid('ok', 'unavailable').required(),
  }).required(),
});

/** Liveness (the process answers), readiness (its dependencies answer) and metrics. */
const ROBOTS_TXT = ['User-agent: *', 'Disallow: /api/', 'Disallow: /s/', 'Disallow: /e/*/rsvp', 'Disallow: /c/*/subscribe/', 'Disallow: /c/*/feeds/', ''].join('\n');

/** How long the landing page's status line is reused: a page anyone can load does not probe the dependencies each time. */
const STATUS_REUSE_MS = 5000;

export function systemRoutes(db: Knex, redis: Redis, queuePrefix: string, isShuttingDown: () => boolean, metrics: Metrics, metricsToken: string | null, publicBaseUrl: string): RouteSpec[] {
  const tags = ['System'];
  let status: { atMs: number; state: Promise<Readiness> } | null = null;
  const currentStatus = () => {
    if (!status || Date.now() - status.atMs > STATUS_REUSE_MS) status = { atMs: Date.now(), state: readiness(db, redis, queuePrefix, isShuttingDown) };
    return status.state;
  };
  return [
    defineRoute({
      method: 'get',
      path: '/',
      operationId: 'home',
      summary: 'What this service is, where its API reference is, how to get a token, and its status',
      description:
        'A page for a person who opens the service in a browser: what it does, the API reference (/docs), how an operator makes a team and its API token (`npm run admin -- create-team`), and whether Postgres and Redis answer (the same checks as /readyz, at most every few seconds).',
      tags,
      auth: false,
      page: true,
      responses: { 200: { description: 'The landing page', contentType: 'text/html' } },
      handler: async (_input, _req, res) => {
        const state = await currentStatus();
        res
          .status(200)
          .set('Content-Security-Policy', pageCsp())
          .set('Cache-Control', 'no-store')
          .type('html')
          .send(landingPage(publicBaseUrl, { ready: state.ready, checks: state.body.checks }));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'Liveness: the process is up',
      description: '200 `{"status":"ok"}` while the process runs, whatever Postgres and Redis do: for a liveness probe (restart only what does not answer this).',
      tags,
      auth: false,
      responses: { 200: { description: 'Alive', body: Joi.object({ status: Joi.string().valid('ok').required() }) } },
      handler: async (_input, _req, res) => {
        res.set('Cache-Control', 'no-store').json({ status: 'ok' });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/robots.txt',
      operationId: 'robots',
      summary: 'What crawlers may index: event and calendar pages, not the API or personal addresses',
      description:
        'The API (including the dynamic-link pages under /api/dyn, whose content is whatever the link says), smart-link triggers, RSVP and subscribe addresses and personal feeds are off limits; dynamic-link pages also say `X-Robots-Tag: noindex`.',
      tags,
      auth: false,
      responses: { 200: { description: 'robots.txt', contentType: 'text/plain' } },
      handler: async (_input, _req, res) => {
        res.set('Cache-Control', 'public, max-age=86400').type('text/plain').send(ROBOTS_TXT);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'Readiness: Postgres and Redis are reachable',
      description: '200 when Postgres answers and Redis takes writes with room to spare (each checked within 2 s) and the process is not shutting down; 503 with which check failed otherwise, so a load balancer stops sending it work.',
      tags,
      auth: false,
      responses: {
        200: { description: 'Ready', body: readySchema },
        503: { description: 'A dependency is unreachable, or the process is shutting down', body: readySchema },
      },
      handler: async (_input, _req, res) => {
        const { ready, body } = await readiness(db, redis, queuePrefix, isShuttingDown);
        res
          .status(ready ? 200 : 503)
          .set('Cache-Control', 'no-store')
          .json(body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics (Bearer METRICS_TOKEN)',
      description:
        'HTTP requests and latency by route and status, queue depth, event-limit rejections and process figures, in the Prometheus text format. Needs `Authorization: Bearer <METRICS_TOKEN>`; not served while METRICS_TOKEN is unset. Workers serve their own (job durations, failures, retries, email deliveries) on their PORT.',
      tags,
      auth: false,
      // Answered as JSON alone, also to a browser: Prometheus and people with curl read it.
      page: false,
      responses: {
        200: { description: 'The metrics', contentType: 'text/plain' },
        401: { description: 'Missing or wrong token', body: messageSchema },
        404: { description: 'METRICS_TOKEN is not set', body: messageSchema },
      },
      handler: async (_input, req, res) => {
        const answer = await metricsAnswer(metrics, metricsToken, req.headers.authorization);
        res.status(200).set(answer.headers).send(answer.body);
      },
    }),
  ];
}
