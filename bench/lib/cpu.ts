import fs from 'node:fs';
import os from 'node:os';
import type { Knex } from '../../shared/db/knex';

/** /proc's clock ticks per second (USER_HZ, 100 on every Linux). */
const USER_HZ = 100;

/** CPU seconds (user + system) a process has used so far; null where /proc cannot tell (not Linux, gone). */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return null;
  }
}

/** The Postgres backends serving this database for the given application names (their pids). */
export async function backendPids(db: Knex, applicationNames: string[]): Promise<number[]> {
  const rows = await db('pg_stat_activity').where('datname', db.raw('current_database()')).whereIn('application_name', applicationNames).select('pid');
  return rows.map((r) => Number(r.pid));
}

/**
 * CPU used by a set of processes over a stretch of time: `start()` before, `stop()` after;
 * `pids` is asked at both ends (Postgres backends come and go with their pools). A process
 * that exits meanwhile is left out, one that starts is counted from zero. Answers null when
 * /proc is not there.
 */
export function cpuMeter(pids: () => Promise<number[]>) {
  const before = new Map<number, number>();
  return {
    async start(): Promise<void> {
      for (const pid of await pids()) before.set(pid, cpuSeconds(pid) ?? 0);
    },
    async stop(): Promise<number | null> {
      if (cpuSeconds(process.pid) === null) return null;
      let total = 0;
      for (const pid of new Set([...before.keys(), ...(await pids())])) {
        const now = cpuSeconds(pid);
        if (now !== null) total += now - (before.get(pid) ?? 0);
      }
      return total;
    },
  };
}

/**
 * CPU seconds the whole machine has been busy, all cores (steal counted as busy: time the
 * host gave to someone else); null without /proc.
 */
export function machineBusySeconds(): number | null {
  try {
    const [, ...ticks] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number); // not idle, iowait
    return (user + nice + system + irq + softirq + steal) / USER_HZ;
  } catch {
    return null;
  }
}

/**
 * The share of the machine's CPU that processes other than `ours` used over a stretch of
 * time (0 to 1 of all cores): what a benchmark shared the machine with. `ours` is asked at
 * both ends, as for cpuMeter.
 */
export function othersMeter(ours: () => Promise<number[]>) {
  const own = cpuMeter(ours);
  let busy0: number | null = null;
  let t0 = 0;
  return {
    async start(): Promise<void> {
      await own.start();
      busy0 = machineBusySeconds();
      t0 = performance.now();
    },
    async stop(): Promise<number | null> {
      const busy1 = machineBusySeconds();
      const seconds = (performance.now() - t0) / 1000;
      const mine = await own.stop();
      if (busy0 === null || busy1 === null || mine === null) return null;
      return Math.max(0, busy1 - busy0 - mine) / (seconds * os.cpus().length);
    },
  };
}
