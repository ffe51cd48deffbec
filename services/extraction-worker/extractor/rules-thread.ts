import { type MessagePort, threadId } from 'node:worker_threads';
import { ExtractionFailure, type ExtractionResult } from './extractor';
import { extractWithRules } from './rules-extractor';
import { osThreadId } from './thread-cpu';

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
  /** Told as the task starts (a ThreadStart), so the pool counts from then, not while the task waited for a thread. */
  started: MessagePort;
}

export interface ThreadStart {
  threadId: number;
  /** The operating system's id of the thread, by which the pool reads the CPU it uses; null where it cannot. */
  osThreadId: number | null;
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

const THIS_THREAD: ThreadStart = { threadId, osThreadId: osThreadId() };

// ts-unused-exports:disable-next-line
export default function extractInThread(task: RulesTask): RulesAnswer {
  task.started.postMessage(THIS_THREAD);
  try {
    return { result: extractWithRules({ text: task.text, timezone: task.timezone, referenceDate: new Date(task.referenceMs) }) };
  } catch (err) {
    if (err instanceof ExtractionFailure) return { failure: err.message };
    throw err;
  }
}

/** Answers once the thread has loaded (and so warmed up): the pool's start waits for one per thread. */
// Piscina calls the thread's exports by name (the pool warms each thread with `ping`).
// ts-unused-exports:disable-next-line
export function ping(): true {
  return true;
}
