import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './processes';

/** One fault scenario's figures: what was asked, what was answered, and what became of it. */
export interface ScenarioFigures {
  scenario: string;
  /** What one request or item is: a submission, an email, an extraction… */
  unit: string;
  sent: number;
  /** Answered 2xx (or, for work queued in bulk, queued). */
  accepted: number;
  /** Answered with a clear refusal, by status. */
  rejected: Record<string, number>;
  /** No answer: the connection was refused or reset. */
  unanswered: number;
  /** Accepted but never done: must be 0. */
  lost: number;
  /** Done more than once: must be 0. */
  duplicated: number;
  note?: string;
}

/** fetch's own failures (refused, reset, cut mid-body, timed out), as opposed to a bug in the test. */
function isNoAnswer(err: unknown): boolean {
  const e = err as { name?: string; message?: string };
  return (e.name === 'TypeError' && (e.message === 'fetch failed' || e.message === 'terminated')) || e.name === 'TimeoutError' || e.name === 'AbortError';
}

const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const runDir = (runId: string) => path.join(ARTIFACTS, 'faults', runId);

/** The status of a request as the tally counts it (null: no answer). */
export type Answer = { status: number } | null;

/**
 * Counts a scenario's requests as they are answered, then its lost and duplicated items
 * once the test has checked them; `save` leaves the figures for the run's summary (the
 * test files run in separate jest workers, so they meet on disk).
 */
export class FaultTally {
  sent = 0;
  accepted = 0;
  unanswered = 0;
  lost = 0;
  duplicated = 0;
  note = '';
  readonly rejected: Record<string, number> = {};

  constructor(
    readonly scenario: string,
    readonly unit: string,
  ) {}

  /** Counts one answer; answers it back so callers can chain. */
  count<T extends Answer>(answer: T): T {
    this.sent++;
    if (answer === null) this.unanswered++;
    else if (answer.status >= 200 && answer.status < 300) this.accepted++;
    else this.rejected[answer.status] = (this.rejected[answer.status] ?? 0) + 1;
    return answer;
  }

  /** Items accepted in bulk (a fan-out of emails queued by one request). */
  acceptedItems(n: number): void {
    this.sent += n;
    this.accepted += n;
  }

  /** Sends one request; no answer (refused, reset, timed out) counts as unanswered. */
  async send<T extends { status: number }>(request: () => Promise<T>): Promise<T | null> {
    let answer: T | null;
    try {
      answer = await request();
    } catch (err) {
      if (!isNoAnswer(err)) throw err;
      answer = null;
    }
    return this.count(answer);
  }

  figures(): ScenarioFigures {
    const { scenario, unit, sent, accepted, rejected, unanswered, lost, duplicated, note } = this;
    return { scenario, unit, sent, accepted, rejected, unanswered, lost, duplicated, ...(note ? { note } : {}) };
  }

  save(): void {
    const runId = process.env.TEST_RUN_ID;
    if (!runId) return;
    fs.mkdirSync(runDir(runId), { recursive: true });
    const name = this.scenario.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 80);
    fs.writeFileSync(path.join(runDir(runId), `${name}.json`), JSON.stringify(this.figures()));
  }
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

export function summaryTable(rows: ScenarioFigures[]): string {
  const lines = [
    '| scenario | unit | sent | accepted (2xx) | rejected (by status) | unanswered | lost | duplicated |',
    '| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    const rejected = Object.entries(r.rejected)
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
    lines.push(`| ${cell(r.scenario)} | ${cell(r.unit)} | ${r.sent} | ${r.accepted} | ${rejected || '0'} | ${r.unanswered} | ${r.lost} | ${r.duplicated} |`);
  }
  const notes = rows.filter((r) => r.note).map((r) => `- ${r.scenario}: ${r.note}`);
  return [...lines, ...(notes.length ? ['', ...notes] : [])].join('\n');
}

/**
 * Gathers the run's scenarios into test-artifacts/faults-summary.md and answers the text
 * to print (null when no fault test ran).
 */
export function writeFaultSummary(runId: string): string | null {
  const dir = runDir(runId);
  if (!fs.existsSync(dir)) return null;
  const rows = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as ScenarioFigures);
  fs.rmSync(dir, { recursive: true, force: true });
  if (!rows.length) return null;
  const text = `## Fault tests: summary\n\n${summaryTable(rows)}\n`;
  fs.writeFileSync(path.join(ARTIFACTS, 'faults-summary.md'), text);
  return text;
}
