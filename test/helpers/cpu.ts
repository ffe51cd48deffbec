/**
 * CPU budgets for hostile input. A budget is far from both sides: what a fixed function
 * takes (a few ms) and what the super-linear one it replaced took on the same input
 * (seconds to a minute), so a busy machine moves neither across it. CPU time, not wall
 * time: waiting for a core does not count.
 */

/** User and system CPU time `fn` took in this process, in milliseconds. */
export function cpuMsOf(fn: () => unknown): number {
  const before = process.cpuUsage();
  try {
    fn();
  } catch {
    // What it answers is the caller's to check; only its cost is measured here.
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}
