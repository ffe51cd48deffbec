/**
 * `npm run test:mutation`: makes one database for the whole Stryker run (as the jest global
 * setup does for `npm test`), runs Stryker with its arguments, then drops the database.
 * Postgres and Redis: DATABASE_URL / REDIS_URL, else the local defaults.
 */
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { URL } = require('node:url');
const { dropDatabase, ensureDatabase } = require('../../dist/shared/db/knex');
const { prepareDatabase } = require('../../dist/shared/db/prepare');

async function main() {
  const runId = `mut_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/calendar_test_${runId}`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl);
  await prepareDatabase(databaseUrl);
  const env = {
    ...process.env,
    TEST_RUN_ID: runId,
    TEST_DATABASE_URL: databaseUrl,
    TEST_REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    TEST_QUEUE_PREFIX: `{test_${runId}}`,
  };
  const stryker = spawn(process.execPath, [path.join(__dirname, '../../node_modules/@stryker-mutator/core/bin/stryker.js'), 'run', ...process.argv.slice(2)], { stdio: 'inherit', env });
  // Stopped (Ctrl-C, SIGTERM): Stryker stops its processes, then the database is dropped.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stryker.kill(signal));
  const status = await new Promise((resolve) => stryker.on('exit', (code) => resolve(code)));
  await dropDatabase(databaseUrl);
  process.exitCode = status ?? 1;
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exitCode = 1;
});
