import { loadConfigOrExit } from '../../../shared/config/config';
import { createDb } from '../../../shared/db/knex';
import { systemClock } from '../../../shared/lifecycle/clock';
import { createLogger } from '../../../shared/logging/logger';
import { createRedis } from '../../../shared/queues/redis';
import { buildApp } from '../app';

/**
 * Prints the OpenAPI document the gateway serves at /docs.openapi, for tools that read it
 * from a file (`npm run lint` runs Redocly's linter on it). Nothing is served and nothing
 * needs to be reachable: connections are made lazily, and never used.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit({ ...process.env, LOG_LEVEL: 'silent' });
  const logger = createLogger('openapi-export', 'silent');
  const db = createDb(config.databaseUrl, { poolMax: 1, logger });
  const redis = createRedis(config.redis, 'client', { lazyConnect: true });
  redis.on('error', () => undefined);
  const built = buildApp({ config, db, redis, logger, clock: systemClock });
  // Out, then exit: the app's lazy connections are never opened, so there is nothing to close.
  await new Promise<void>((resolve, reject) => process.stdout.write(`${JSON.stringify(built.openapi, null, 2)}\n`, (err) => (err ? reject(err) : resolve())));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`could not export the OpenAPI document: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
