import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dropDatabase } from '../../shared/db/knex';
import { testEnv } from '../helpers/gateway';
import { SERVICES } from '../../services/services';
import { freePortRange, ROOT } from '../helpers/processes';
import { isolatedPrefix } from '../helpers/service-processes';

/**
 * The README's Quick start, pasted whole into bash, works on a fresh database: it waits for
 * the service, gets a token, makes a calendar and an event, invites someone (the email lands
 * in the outbox) and reads a sentence. Three things differ from a person's terminal, each
 * for the test's sake: the service's port is a free one instead of 3000; `npm start` and
 * `npm run admin` run their built entry points (npm would rebuild dist/ under the other test
 * files running from it; `npm test` has just built it); and the database and queue prefix
 * are the test's own.
 */
jest.setTimeout(120_000);

function quickStart(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start\n'));
  const start = section.indexOf('```sh\n') + '```sh\n'.length;
  return section.slice(start, section.indexOf('```', start));
}

it("the README's Quick start runs pasted whole on a fresh database", async () => {
  const port = await freePortRange(SERVICES.length);
  const db = new URL(testEnv().DATABASE_URL as string);
  db.pathname = `${db.pathname}_quickstart`;
  const outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'quickstart-outbox-'));
  const block = quickStart();
  expect(block).toContain('npm start &');
  const script = block
    .replaceAll('localhost:3000', `localhost:${port}`)
    .replace('npm start &', 'node dist/services/main.js > launcher.log 2>&1 &')
    .replaceAll('npm run --silent admin --', 'node dist/services/admin/main.js');
  const env = {
    ...testEnv({ LOG_LEVEL: 'info', OUTBOX_DIR: outbox, QUEUE_PREFIX: isolatedPrefix('quickstart') }),
    DATABASE_URL: db.toString(),
    PORT: String(port),
    PUBLIC_BASE_URL: `http://localhost:${port}`,
  };
  await dropDatabase(env.DATABASE_URL);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quickstart-'));
  fs.symlinkSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  // Then stop what it started, as a person would with Ctrl-C.
  const bash = spawn('bash', ['--noprofile', '--norc', '-c', `set -e\n${script}\nkill $!\nwait $! || true`], { cwd: dir, env: { PATH: process.env.PATH, ...env }, detached: true });
  let out = '';
  let err = '';
  bash.stdout.on('data', (d) => (out += d));
  bash.stderr.on('data', (d) => (err += d));
  try {
    const code = await new Promise<number | null>((resolve) => bash.on('exit', resolve));
    expect({ code, err }).toEqual({ code: 0, err: '' });
    // The invitation's answer, then the extraction's.
    const [invited, extracted] = out.trim().split('\n').slice(-2).map((line) => JSON.parse(line));
    expect(invited.data).toEqual([expect.objectContaining({ email: 'ann@example.com', name: 'Ann', last_delivery: expect.objectContaining({ kind: 'invitation' }) })]);
    expect(extracted.data).toMatchObject({ status: 'completed', result: { title: 'Lunch with Sam', location: 'Cafe Luna' } });
    expect(fs.readdirSync(outbox).filter((f) => f.endsWith('-invitation.eml'))).toHaveLength(1);
    expect(fs.readFileSync(path.join(dir, 'launcher.log'), 'utf8')).toContain(`Ready: http://localhost:${port}\n`);
  } finally {
    if (bash.exitCode === null && bash.pid) process.kill(-bash.pid, 'SIGKILL');
    await dropDatabase(env.DATABASE_URL);
    fs.rmSync(outbox, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
