import fs from 'node:fs';
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
