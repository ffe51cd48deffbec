/**
 * `npm run test:mutation`: makes one database for the whole Stryker run (as the jest global
 * setup does for `npm test`), runs Stryker with its arguments, then drops the database.
 * Postgres and Redis: DATABASE_URL / REDIS_URL, else the local defaults.
 */
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
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
  process.exitCode = status === 0 ? belowThreshold() : (status ?? 1);
}

/** Stryker's break threshold is on the whole run's score; the goal is each module's. */
const MODULE_THRESHOLD = 90;

function belowThreshold() {
  const report = JSON.parse(fs.readFileSync(path.join(__dirname, '../../reports/mutation/mutation.json'), 'utf8'));
  const low = [];
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const count = (...states) => mutants.filter((m) => states.includes(m.status)).length;
    const detected = count('Killed', 'Timeout');
    const scored = detected + count('Survived', 'NoCoverage');
    const score = scored === 0 ? 100 : (100 * detected) / scored;
    if (score < MODULE_THRESHOLD) low.push(`${file}: ${score.toFixed(2)}%`);
  }
  if (!low.length) return 0;
  process.stderr.write(`Modules below a mutation score of ${MODULE_THRESHOLD}%:\n  ${low.join('\n  ')}\n`);
  return 1;
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exitCode = 1;
});
