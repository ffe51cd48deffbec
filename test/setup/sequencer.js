/**
 * The order test files start in. Jest starts the files that took longest in its last run
 * first, so the two workers end together; on a fresh machine (CI) it has no last run and
 * goes by file size, which can leave a minute-long file to start last, beside an idle
 * worker. The files below are the slow ones (seconds on two cores, 2026-11-27): they start
 * first, longest first, on every machine; the rest follow in Jest's own order.
 */
const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');

const SLOW = [
  ['dashboard/screens.test.ts', 117],
  ['faults/crash-loop.faults.test.ts', 110],
  ['security/fuzz.test.ts', 86],
  ['dashboard/flows.test.ts', 77],
  ['process/gateway-process.test.ts', 72],
  ['faults/redis-cluster.faults.test.ts', 66],
  ['browser/public-pages.test.ts', 65],
  ['security/xss.test.ts', 45],
  ['shared/ics-readers.test.ts', 39],
  ['faults/shared-redis.faults.test.ts', 35],
  ['faults/worker-kill.faults.test.ts', 35],
  ['security/mail-fairness.test.ts', 31],
  ['faults/redis-full.faults.test.ts', 27],
  ['scale/list-plans.test.ts', 26],
  ['mail-worker/email-layout.test.ts', 25],
];
const seconds = new Map(SLOW.map(([file, s]) => [path.join(__dirname, '..', file), s]));

class SlowFirst extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    const slow = ordered.filter((t) => seconds.has(t.path)).sort((a, b) => seconds.get(b.path) - seconds.get(a.path));
    return [...slow, ...ordered.filter((t) => !seconds.has(t.path))];
  }
}

module.exports = SlowFirst;
