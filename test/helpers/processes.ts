import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const dist = (entry: string) => path.join(ROOT, 'dist', 'services', entry);

export interface Spawned {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs a built service entry point (npm test builds first) as its own process. */
export function spawnNode(entry: string, env: NodeJS.ProcessEnv, args: string[] = []): Spawned {
  const proc = spawn(process.execPath, [entry, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (d) => (out += d));
  proc.stderr?.on('data', (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { proc, stdout: () => out, stderr: () => err, exited };
}

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

/** A port whose next `count - 1` ports are free too (the launcher gives workers PORT+1, +2…). */
export async function freePortRange(count: number): Promise<number> {
  for (;;) {
    const base = await freePort();
    if (base + count > 65535) continue;
    const free = await Promise.all(Array.from({ length: count - 1 }, (_, i) => canListen(base + i + 1)));
    if (free.every(Boolean)) return base;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
