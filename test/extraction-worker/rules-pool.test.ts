import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../shared/config/config';
import { createLogger } from '../../shared/logging/logger';
import { ExtractionFailure, ExtractionTimeout, type ExtractionInput } from '../../services/extraction-worker/extractor/extractor';
import { extractorFor } from '../../services/extraction-worker/extractor/fallback-extractor';
import { extractWithRules } from '../../services/extraction-worker/extractor/rules-extractor';
import { RulesPool } from '../../services/extraction-worker/extractor/rules-pool';
import { waitFor } from '../helpers/wait';

/**
 * The rules in their pool of worker threads. The threads run the compiled extractor from
 * dist/ (threads load JavaScript, and these tests run the TypeScript), which `npm test`
 * builds first; after changing the extractor, build before running this file alone.
 *
 * No text the rules read today comes near a budget, so the tests that overrun one use a
 * thread module of their own (fixtures/hanging-thread.js): the rules, except that it runs
 * the recurrence pattern as it was before its fix (a thread stuck for minutes in a regular
 * expression, as in the incident), or sleeps a given time. Budgets are far from both: a
 * stuck thread never finishes, a one-line text takes about 1 ms.
 */
const log = createLogger('pool-test', 'silent');
const HANGING = path.join(__dirname, 'fixtures', 'hanging-thread.js');
const at = (text: string): ExtractionInput => ({ text, timezone: 'America/New_York', referenceDate: new Date('2026-03-05T15:00:00Z') });
/** 228 characters that took the old recurrence pattern about a minute. */
const STUCK = `every ${'tuesand'.repeat(31)}tuesx`;
const QUICK = 'Lunch tomorrow at 1pm at Cafe Luna';

const pools: RulesPool[] = [];
async function pool(threads: number, timeoutMs: number, filename?: string): Promise<RulesPool> {
  const p = new RulesPool({ threads, timeoutMs, logger: log, filename });
  pools.push(p);
  await p.warmUp();
  return p;
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

describe('the rules in a thread pool', () => {
  it('answers what the rules answer in this thread, failures included', async () => {
    const p = await pool(2, 1000);
    expect(await p.extract(at(QUICK))).toEqual(extractWithRules(at(QUICK)));
    const failure = p.extract(at('Please bring snacks for everyone'));
    await expect(failure).rejects.toBeInstanceOf(ExtractionFailure);
    await expect(failure).rejects.toThrow('No date or time found in the text.');
  });

  it('stops a thread stuck in a regular expression at the budget, answers extraction_timeout, and keeps serving', async () => {
    const p = await pool(4, 300, HANGING);
    const before = p.threadIds();
    expect(before).toHaveLength(4);
    // The stuck text and quick ones at once: the quick ones are answered while it hangs.
    const [stuck, ...quick] = await Promise.allSettled([p.extract(at(STUCK)), p.extract(at(QUICK)), p.extract(at(QUICK)), p.extract(at(QUICK))]);
    expect(stuck.status === 'rejected' && stuck.reason).toBeInstanceOf(ExtractionTimeout);
    expect(stuck.status === 'rejected' && (stuck.reason as Error).message).toBe('extraction_timeout');
    expect(quick.map((q) => (q.status === 'fulfilled' ? q.value.title : String(q.reason)))).toEqual(['Lunch', 'Lunch', 'Lunch']);
    // Its thread is gone (terminated: the regular expression does not go on burning a core)
    // and a fresh one takes its place.
    const after = await waitFor(() => {
      const ids = p.threadIds();
      return ids.length === 4 && ids.filter((id) => !before.includes(id)).length === 1 && ids;
    }, { what: 'the stopped thread to be replaced' });
    expect(after.filter((id) => before.includes(id))).toHaveLength(3);
    await p.warmUp();
    const idle = process.cpuUsage();
    await new Promise<void>((resolve) => {
      setTimeout(resolve, 1000);
    });
    // A thread still in the pattern would use a whole core (about 1000 ms in this second).
    expect(cpuMs(idle)).toBeLessThan(500);
    const again = await Promise.all([QUICK, QUICK, QUICK, QUICK].map((text) => p.extract(at(text))));
    expect(again.map((r) => r.title)).toEqual(['Lunch', 'Lunch', 'Lunch', 'Lunch']);
  });

  it('counts the budget from when a thread starts on the text, not while it waits for one', async () => {
    // One thread, ten tasks of 50 ms each queued at once: the last waits 450 ms, twice the
    // budget, and is still done, since only its own 50 ms count.
    const p = await pool(1, 200, HANGING);
    const answers = await Promise.allSettled(Array.from({ length: 10 }, () => p.extract(at('SLEEP 50'))));
    expect(answers.map((a) => (a.status === 'rejected' ? String(a.reason) : 'done'))).toEqual(Array(10).fill('ExtractionFailure: slept'));
  });

  // Where Linux tells a thread's CPU time; elsewhere the budget is wall-clock time.
  const onLinux = fs.existsSync('/proc/thread-self/schedstat') ? it : it.skip;
  onLinux('counts CPU, not waiting: a thread that uses none is stopped only at ten times the budget (at least 1 s)', async () => {
    const p = await pool(2, 100, HANGING);
    const [waited, held] = await Promise.allSettled([p.extract(at('SLEEP 400')), p.extract(at('SLEEP 5000'))]);
    expect(waited.status === 'rejected' && String(waited.reason)).toBe('ExtractionFailure: slept');
    expect(held.status === 'rejected' && held.reason).toBeInstanceOf(ExtractionTimeout);
  });

  it('is the fallback of the model, with the same budget', async () => {
    const p = await pool(1, 300, HANGING);
    const unreachable = loadConfig({ EXTRACT_LLM_URL: 'http://127.0.0.1:1/v1/chat/completions', EXTRACT_LLM_TIMEOUT_MS: '300' }).extractLlm;
    const extractor = extractorFor(unreachable, p, log);
    expect(extractor.name).toBe('llm+rules');
    expect((await extractor.extract(at(QUICK))).title).toBe('Lunch');
    await expect(extractor.extract(at(STUCK))).rejects.toBeInstanceOf(ExtractionTimeout);
  });

  it('stops its threads on close, and takes nothing after', async () => {
    const p = new RulesPool({ threads: 2, timeoutMs: 1000, logger: log });
    await p.warmUp();
    await p.close();
    expect(p.threadIds()).toEqual([]);
    await expect(p.extract(at(QUICK))).rejects.toThrow('the extraction pool is closed');
  });
});
