import { type MessagePort, threadId } from 'node:worker_threads';
import { ExtractionFailure, type ExtractionResult } from './extractor';
import { extractWithRules } from './rules-extractor';

/**
 * The rules extractor inside a worker thread of the pool (rules-pool.ts): one task at a
 * time, so the pool can stop the thread of a text that takes too long without touching
 * any other job.
 */
export interface RulesTask {
  text: string;
  timezone: string;
  /** The reference instant, in epoch milliseconds. */
  referenceMs: number;
  /** Told (with this thread's id) as the task starts, so the pool's clock runs from then, not while it waited for a thread. */
  started: MessagePort;
}

/** What the text says, or why it says nothing (an ExtractionFailure does not survive the thread boundary as itself). */
export type RulesAnswer = { result: ExtractionResult } | { failure: string };

// A long text the first time compiles chrono's and the rules' regular expressions; doing it
// as the thread loads keeps that one-off cost out of the first job it takes (the pool counts
// a thread ready once this module has loaded), and out of that job's time budget.
const WARM_UP_TEXT = `${'Agenda and notes for the quarter, shared with the whole team. '.repeat(60)}Lunch tomorrow at 1pm at Cafe Luna for 90 minutes`;
try {
  extractWithRules({ text: WARM_UP_TEXT, timezone: 'UTC', referenceDate: new Date() });
} catch {
  // A warm-up that fails costs only the speed of the first job.
}

export default function extractInThread(task: RulesTask): RulesAnswer {
  task.started.postMessage(threadId);
  try {
    return { result: extractWithRules({ text: task.text, timezone: task.timezone, referenceDate: new Date(task.referenceMs) }) };
  } catch (err) {
    if (err instanceof ExtractionFailure) return { failure: err.message };
    throw err;
  }
}

/** Answers once the thread has loaded (and so warmed up): the pool's start waits for one per thread. */
export function ping(): true {
  return true;
}
