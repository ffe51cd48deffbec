import fs from 'node:fs';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from '../../../shared/logging/logger';
import { type ExtractionInput, ExtractionFailure, type ExtractionResult, type Extractor, ExtractionTimeout } from './extractor';
import type { RulesAnswer, RulesTask, ThreadStart } from './rules-thread';
import { threadCpuMs } from './thread-cpu';

/**
 * The rules extractor run in a pool of worker threads, each text under a hard CPU budget.
 * The rules are synchronous: run on the worker's own thread, one text that took a minute
 * held the event loop (the job's lock expired, so it ran again) and every other team's
 * extraction waited behind it. In a thread, a text that has used `timeoutMs` of CPU has its
 * thread stopped (terminated; the pool starts a fresh one) and the job fails with
 * `extraction_timeout`; the other threads go on serving.
 *
 * The CPU is the thread's own, as Linux counts it (thread-cpu.ts): time waiting for a core
 * on a busy machine does not count. A text is also stopped after ten times its budget in
 * wall-clock time (at least a second), so a thread that cannot get a core is not waited
 * for without end; where the system does not tell a thread's CPU, that wall-clock time,
 * the budget itself, is the limit (a thread runs one task at a time, so it bounds the CPU).
 */
interface RulesPoolOptions {
  /** Threads, one per job the worker runs at once: a job never waits for a thread another job holds. */
  threads: number;
  /** CPU time one text may use once its thread starts on it (EXTRACT_TIMEOUT_MS). */
  timeoutMs: number;
  logger: Logger;
  /** The thread module (compiled JavaScript); the rules' by default. Tests give one that can be made to hang. */
  filename?: string;
}

/**
 * Threads load JavaScript: the compiled thread module beside this one. Run from the
 * TypeScript sources (jest), that is the build's copy in dist/, which `npm test` makes first.
 */
function threadFile(): string {
  const beside = path.join(__dirname, 'rules-thread.js');
  if (fs.existsSync(beside)) return beside;
  const built = path.resolve(__dirname, '..', '..', '..', 'dist', 'services', 'extraction-worker', 'extractor', 'rules-thread.js');
  if (fs.existsSync(built)) return built;
  throw new Error(`the extraction thread is not built (${built}): run npm run build`);
}

export class RulesPool implements Extractor {
  readonly name = 'rules';
  private readonly pool: Piscina<RulesTask | null, RulesAnswer | true>;
  private closed = false;

  constructor(private readonly options: RulesPoolOptions) {
    this.pool = new Piscina({
      filename: options.filename ?? threadFile(),
      minThreads: options.threads,
      maxThreads: options.threads,
      // Threads stay up: a fresh one spends about a second of CPU loading and warming up.
      idleTimeout: Infinity,
    });
    this.pool.on('error', (err: Error) => options.logger.error({ err: err.message }, 'extraction thread failed'));
  }

  /** Resolves once every thread has loaded the rules and warmed them up. */
  async warmUp(): Promise<void> {
    // One task per thread at once: each thread takes one (a thread runs one task at a time),
    // and a thread answers only once its module, warm-up included, has loaded.
    await Promise.all(Array.from({ length: this.options.threads }, () => this.pool.run(null, { name: 'ping' })));
  }

  async extract(input: ExtractionInput): Promise<ExtractionResult> {
    // Piscina would start new threads for a task after close; a closed pool stays closed.
    if (this.closed) throw new Error('the extraction pool is closed');
    const { port1: heard, port2: started } = new MessageChannel();
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    let thread: number | undefined;
    // The budget runs from the moment the thread starts on the text, not from the queue.
    heard.once('message', (start: ThreadStart) => {
      thread = start.threadId;
      const budget = this.options.timeoutMs;
      const begun = performance.now();
      const cpu = () => (start.osThreadId === null ? null : threadCpuMs(start.osThreadId));
      const cpuAtStart = cpu();
      const wallLimit = cpuAtStart === null ? budget : Math.max(10 * budget, 1000);
      const check = () => {
        const wall = performance.now() - begun;
        const now = cpu();
        const used = cpuAtStart === null || now === null ? wall : now - cpuAtStart;
        if (used >= budget || wall >= wallLimit) {
          timedOut = true;
          abort.abort();
          return;
        }
        // Not before the rest of the budget could have been used.
        timer = setTimeout(check, Math.min(budget - used, wallLimit - wall));
      };
      timer = setTimeout(check, budget);
    });
    try {
      const answer = (await this.pool.run(
        { text: input.text, timezone: input.timezone, referenceMs: input.referenceDate.getTime(), started },
        { signal: abort.signal, transferList: [started] },
      )) as RulesAnswer;
      if ('failure' in answer) throw new ExtractionFailure(answer.failure);
      return answer.result;
    } catch (err) {
      if (timedOut) {
        this.options.logger.warn({ timeoutMs: this.options.timeoutMs, chars: input.text.length, thread }, 'extraction took longer than its budget; its thread was stopped');
        throw new ExtractionTimeout();
      }
      throw err;
    } finally {
      clearTimeout(timer);
      heard.close();
    }
  }

  /** The ids of the threads running (the log line of a stopped text names its thread). */
  threadIds(): number[] {
    return this.pool.threads.map((t) => t.threadId);
  }

  /** Waits for running texts (the worker has let its jobs finish by now), then stops the threads. */
  close(): Promise<void> {
    this.closed = true;
    return this.pool.close();
  }
}
