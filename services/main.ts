import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { loadConfigOrExit } from '../shared/config/config';
import { prepareDatabase } from '../shared/db/prepare';
import type { ReadyMessage } from '../shared/lifecycle/health';
import { checkPostgres, checkRedis } from '../shared/lifecycle/reachability';
import { createLogger } from '../shared/logging/logger';
import { SERVICES } from './services';

/**
 * `npm start`: prepares the database, then runs every service as its own process (as
 * docker-compose and Kubernetes do), forwards SIGTERM/SIGINT to them, and stops them all
 * when one dies so a supervisor can restart the set.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger('launcher', config.logLevel);
  // Postgres and Redis first: a person starting the service reads one line for each that
  // cannot be reached, not a stack trace or every service's retries.
  const problems = (await Promise.all([checkPostgres(config.databaseUrl), checkRedis(config)])).filter((p): p is string => p !== null);
  if (problems.length) {
    process.stderr.write(`${problems.join('\n')}\n`);
    process.exit(1);
  }
  await prepareDatabase(config.databaseUrl, logger);

  const children = new Map<string, ChildProcess>();
  const ready = new Set<string>();
  let stopping = false;
  const stopAll = (signal: NodeJS.Signals, code: number) => {
    if (!stopping) {
      stopping = true;
      process.exitCode = code;
      for (const child of children.values()) child.kill(signal);
    }
  };

  // The gateway on PORT; each worker's /healthz, /readyz and /metrics on the ports after it.
  const ports = new Map(SERVICES.map((s, i) => [s.name, config.port === 0 ? 0 : config.port + i]));
  for (const service of SERVICES) {
    const env = { ...process.env, PORT: String(ports.get(service.name)) };
    const child = fork(path.join(__dirname, service.entry), [], { stdio: 'inherit', env, execArgv: [...process.execArgv, ...service.nodeFlags] });
    children.set(service.name, child);
    child.on('message', (message: ReadyMessage) => {
      if (message?.type !== 'ready' || ready.has(service.name)) return;
      ready.add(service.name);
      // One plain line a person reads (the rest are JSON logs), once every service is ready.
      if (ready.size === SERVICES.length) process.stdout.write(`Ready: ${config.publicBaseUrl}\n`);
    });
    child.on('exit', (code, signal) => {
      children.delete(service.name);
      if (!stopping) {
        logger.error({ service: service.name, code, signal }, 'service exited; stopping the others');
        stopAll('SIGTERM', 1);
      }
      if (children.size === 0) process.exit(process.exitCode ?? 0);
    });
  }
  process.on('SIGTERM', () => stopAll('SIGTERM', 0));
  process.on('SIGINT', () => stopAll('SIGTERM', 0));
  logger.info({ services: Object.fromEntries(ports), url: config.publicBaseUrl }, `calendar service starting on ${config.publicBaseUrl}`);
}

main().catch((err) => {
  process.stderr.write(`start failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
