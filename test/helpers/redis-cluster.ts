import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { closeRedis, createRedis, type RedisServer } from '../../shared/queues/redis';
import { freePort } from './processes';
import { waitFor } from './wait';

const run = promisify(execFile);

/** Why the cluster tests cannot run here, or null when they can (redis-server and redis-cli on PATH). */
export function redisClusterUnavailable(): string | null {
  for (const tool of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(tool, ['--version'], { stdio: 'ignore' });
    if (probe.error || probe.status !== 0) return `${tool} is not on PATH (install Redis 7: apt-get install redis-server)`;
  }
  return null;
}

interface Node {
  port: number;
  /** The cluster bus port, chosen here: port + 10000 (Redis's default) may be past 65535 for a high free port. */
  busPort: number;
  dir: string;
  proc: ChildProcess | null;
}

/**
 * A Redis Cluster owned by one test: `masters` servers on loopback, each in a directory of
 * its own (its nodes.conf and AOF), joined by `redis-cli --cluster create` with no replicas,
 * so every slot has one master. AOF with fsync always, as production Redis runs, so a master
 * killed and started again comes back with its jobs and its place in the cluster. Keyspace
 * notifications are on, so a test can see every key written, short-lived ones included.
 */
export class TestRedisCluster {
  private constructor(
    private readonly members: Node[],
    readonly nodeTimeoutMs: number,
  ) {}

  static async start(opts: { masters?: number; nodeTimeoutMs?: number } = {}): Promise<TestRedisCluster> {
    const count = opts.masters ?? 3;
    const members: Node[] = [];
    const taken = new Set<number>();
    while (members.length < count) {
      const [port, busPort] = [await freePort(), await freePort()];
      if (port === busPort || taken.has(port) || taken.has(busPort)) continue;
      taken.add(port).add(busPort);
      members.push({ port, busPort, dir: fs.mkdtempSync(path.join(os.tmpdir(), 'test-redis-cluster-')), proc: null });
    }
    const cluster = new TestRedisCluster(members, opts.nodeTimeoutMs ?? 1000);
    try {
      await Promise.all(members.map((_, i) => cluster.startNode(i)));
      await run('redis-cli', ['--cluster', 'create', ...members.map((m) => `127.0.0.1:${m.port}`), '--cluster-replicas', '0', '--cluster-yes']);
      await cluster.waitUntilOk();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** Each node's URL: every one of them is a seed the services can be given. */
  get urls(): string[] {
    return this.members.map((m) => `redis://127.0.0.1:${m.port}`);
  }

  /** The settings that point a service at this cluster. */
  env(): { REDIS_URL: string; REDIS_CLUSTER: string } {
    return { REDIS_URL: this.urls.join(','), REDIS_CLUSTER: 'true' };
  }

  /**
   * Records the name of every key written on any node from now on (keyspace notifications
   * are per node: each is listened to), until stopped.
   */
  async recordKeys(): Promise<{ keys: Set<string>; stop(): Promise<void> }> {
    const keys = new Set<string>();
    const channel = '__keyspace@0__:';
    const subs: RedisServer[] = this.urls.map((url) => createRedis(url, 'worker', { connectionName: 'test-keyspace' }));
    for (const sub of subs) {
      sub.on('error', () => undefined);
      sub.on('pmessage', (_pattern: string, name: string) => keys.add(name.slice(channel.length)));
    }
    await Promise.all(subs.map((sub) => sub.psubscribe(`${channel}*`)));
    return { keys, stop: async () => void (await Promise.all(subs.map((sub) => closeRedis(sub)))) };
  }

  /** One node's answer to a command, through redis-cli (not the code under test). */
  async cli(index: number | 'any', ...args: string[]): Promise<string> {
    const node = this.members[index === 'any' ? this.running()[0] : index];
    const { stdout } = await run('redis-cli', ['-p', String(node.port), ...args]);
    return stdout.trim();
  }

  /** The index of the master that serves `key`'s slot. */
  async ownerOf(key: string): Promise<number> {
    const slot = Number(await this.cli('any', 'CLUSTER', 'KEYSLOT', key));
    const nodes = await this.cli('any', 'CLUSTER', 'NODES');
    for (const line of nodes.split('\n')) {
      const [, address, flags, , , , , , ...slots] = line.split(' ');
      if (!flags.includes('master')) continue;
      const port = Number(address.split('@')[0].split(':')[1]);
      for (const range of slots) {
        const [from, to] = range.split('-').map(Number);
        if (slot >= from && slot <= (to ?? from)) return this.members.findIndex((m) => m.port === port);
      }
    }
    throw new Error(`no master serves slot ${slot}`);
  }

  private async startNode(index: number): Promise<void> {
    const m = this.members[index];
    m.proc = spawn(
      'redis-server',
      [
        '--port', String(m.port),
        '--cluster-port', String(m.busPort),
        '--bind', '127.0.0.1',
        '--cluster-enabled', 'yes',
        '--cluster-config-file', path.join(m.dir, 'nodes.conf'),
        '--cluster-node-timeout', String(this.nodeTimeoutMs),
        '--dir', m.dir,
        '--save', '',
        '--appendonly', 'yes',
        '--appendfsync', 'always',
        '--notify-keyspace-events', 'KA',
      ],
      { stdio: 'ignore' },
    );
    await waitFor(async () => (await this.cli(index, 'PING')) === 'PONG', { what: `redis-server on ${m.port}` });
  }

  private running(): number[] {
    return this.members.flatMap((m, i) => (m.proc ? [i] : []));
  }

  /** Resolves once every running node says cluster_state:ok. */
  async waitUntilOk(timeoutMs = 30_000): Promise<void> {
    await waitFor(
      async () => {
        const states = await Promise.all(this.running().map((i) => this.cli(i, 'CLUSTER', 'INFO')));
        return states.every((info) => info.includes('cluster_state:ok'));
      },
      { what: 'cluster_state:ok on every node', timeoutMs },
    );
  }

  /** Resolves once the running nodes have marked the cluster failed (a master is gone). */
  async waitUntilFailed(timeoutMs = 30_000): Promise<void> {
    await waitFor(
      async () => {
        const states = await Promise.all(this.running().map((i) => this.cli(i, 'CLUSTER', 'INFO')));
        return states.every((info) => info.includes('cluster_state:fail'));
      },
      { what: 'cluster_state:fail on the nodes still up', timeoutMs },
    );
  }

  /** SIGKILL one node: a crash, not a shutdown. */
  async kill(index: number): Promise<void> {
    const proc = this.members[index].proc;
    this.members[index].proc = null;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  }

  /** Starts a killed node again: it reads its nodes.conf and AOF and takes its slots back. */
  async restart(index: number): Promise<void> {
    await this.startNode(index);
  }

  async stop(): Promise<void> {
    for (let i = 0; i < this.members.length; i++) await this.kill(i);
    for (const m of this.members) fs.rmSync(m.dir, { recursive: true, force: true });
  }
}
