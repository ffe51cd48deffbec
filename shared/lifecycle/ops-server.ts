import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from '../db/knex';
import { AppError, errorJson, httpError } from '../errors/app-error';
import { type Metrics, metricsAnswer } from '../metrics/metrics';
import type { Redis } from '../queues/redis';
import { readiness } from './health';

interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * A worker's small HTTP server, for its orchestrator and Prometheus: `/healthz` (the process
 * answers), `/readyz` (Postgres and Redis answer, and the worker is taking jobs) and
 * `/metrics` (Bearer METRICS_TOKEN). Nothing else is served.
 */
export async function startOpsServer(o: {
  port: number;
  host: string;
  db: Knex;
  redis: Redis;
  queuePrefix: string;
  metrics: Metrics;
  metricsToken: string | null;
  isShuttingDown: () => boolean;
  isRunning: () => boolean;
}): Promise<OpsServer> {
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  /** Errors as every service answers them (see errorJson). */
  const refuse = (res: http.ServerResponse, err: unknown) => {
    const answer = errorJson(err);
    res.writeHead(answer.status, { ...answer.headers, 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(answer.json));
  };
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, new AppError('method_not_allowed', 405, `This address does not take ${req.method}: use GET, HEAD.`, {}, { Allow: 'GET, HEAD' }));
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      readiness(o.db, o.redis, o.queuePrefix, () => o.isShuttingDown() || !o.isRunning()).then(
        ({ ready, body }) => json(res, ready ? 200 : 503, body),
        () => json(res, 503, { status: 'unavailable' }),
      );
      return;
    }
    if (path === '/metrics') {
      metricsAnswer(o.metrics, o.metricsToken, req.headers.authorization).then(
        (a) => {
          res.writeHead(200, a.headers);
          res.end(a.body);
        },
        (err: unknown) => refuse(res, err),
      );
      return;
    }
    refuse(res, httpError(404, 'Not found.'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
