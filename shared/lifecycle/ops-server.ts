import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from '../db/knex';
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
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { message: 'Method not allowed.' });
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
          res.writeHead(a.status, a.headers);
          res.end(a.body);
        },
        () => json(res, 500, { message: 'Server Error' }),
      );
      return;
    }
    json(res, 404, { message: 'Not found.' });
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
