import fs from 'node:fs';
import path from 'node:path';

/**
 * The CPU time one thread of this process has used, where the system says (Linux: the
 * first field of /proc/self/task/<tid>/schedstat, nanoseconds on a core). Node has no such
 * figure for a worker thread (process.cpuUsage counts every thread), and a budget kept in
 * wall-clock time would also count the time a thread waits for a core on a busy machine.
 */

/** This thread's id in the operating system, or null where /proc/thread-self is not there. */
export function osThreadId(): number | null {
  try {
    const id = Number(path.basename(fs.readlinkSync('/proc/thread-self')));
    return Number.isInteger(id) && id > 0 ? id : null;
  } catch {
    return null;
  }
}

/** Milliseconds of CPU the thread has used, or null (no such thread any more, or no /proc). */
export function threadCpuMs(tid: number): number | null {
  try {
    const ns = Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}
