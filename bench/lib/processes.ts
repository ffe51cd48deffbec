import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { service } from '../../services/services';

export const DIST = path.resolve(__dirname, '..', '..');

/** A service's node arguments as it ships (services/services.ts: its flags, then its entry), so a benchmark measures what users run. */
export function serviceArgv(name: string): string[] {
  const s = service(name);
  return [...s.nodeFlags, path.join(DIST, 'services', s.entry)];
}

/** `BENCH_CPU_PROF=dir`: every process a benchmark starts writes a V8 CPU profile there when it exits. */
const nodeArgs = (): string[] => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface Proc {
  child: ChildProcess;
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** Starts `node …argv` (a built entry point and its arguments) with PORT set and waits until `readyPath` answers 200. */
export async function startProcess(argv: string[], env: NodeJS.ProcessEnv, readyPath = '/healthz'): Promise<Proc> {
  const port = Number(env.PORT ?? (await freePort()));
  const child = spawn(process.execPath, [...nodeArgs(), ...argv], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`node ${argv.join(' ')} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url + readyPath)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`node ${argv.join(' ')} did not become ready`);
    await new Promise<void>((resolve) => {
      setTimeout(resolve, 100);
    });
  }
  return {
    child,
    port,
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Starts a worker process (its /healthz etc. on any free port); `onStdout` receives its log lines. */
export function startWorker(
  argv: string[],
  env: NodeJS.ProcessEnv,
  onStdout?: (chunk: string) => void,
): { child: ChildProcess; stop(): Promise<void> } {
  const child = spawn(process.execPath, [...nodeArgs(), ...argv], { env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', onStdout ? 'pipe' : 'ignore', 'inherit'] });
  if (onStdout) child.stdout?.on('data', (d: Buffer) => onStdout(d.toString()));
  return {
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
