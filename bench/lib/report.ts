import fs from 'node:fs';
import path from 'node:path';

/** One line of the results table: our figure beside its baseline from the same run. */
export interface BenchRow {
  bench: string;
  figure: string;
  value: number;
  baseline: number;
  unit: string;
  /** value ÷ baseline, or baseline ÷ value when lower is better. */
  ratio: number;
  goal: string;
  met: boolean;
}

export function row(
  bench: string,
  figure: string,
  value: number,
  baseline: number,
  unit: string,
  goal: { atLeast?: number; atMost?: number; lowerIsBetter?: boolean; text?: string; met?: boolean },
): BenchRow {
  const ratio = baseline === 0 ? 0 : value / baseline;
  let met = goal.met ?? true;
  if (goal.atLeast !== undefined) met = ratio >= goal.atLeast;
  if (goal.atMost !== undefined) met = ratio <= goal.atMost;
  const text = goal.text ?? (goal.atLeast !== undefined ? `≥ ${goal.atLeast}×` : goal.atMost !== undefined ? `≤ ${goal.atMost}×` : '—');
  return { bench, figure, value, baseline, unit, ratio, goal: text, met };
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));

export function toMarkdown(rows: BenchRow[], meta: string): string {
  const lines = [
    `# Benchmark results`,
    '',
    meta,
    '',
    '| bench | figure | ours | baseline | ratio | goal | met |',
    '| --- | --- | ---: | ---: | ---: | --- | :---: |',
    ...rows.map(
      (r) =>
        `| ${r.bench} | ${r.figure} | ${fmt(r.value)} ${r.unit} | ${fmt(r.baseline)} ${r.unit} | ${r.baseline === 0 ? '—' : `${r.ratio.toFixed(2)}×`} | ${r.goal} | ${r.met ? 'yes' : '**no**'} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

/** Sections of RESULTS.md written by other tools (from this heading on), kept by every bench run. */
const KEPT_SECTION = '\n## Mutation scores';

export function writeResults(markdown: string): string {
  const file = path.resolve(__dirname, '..', '..', '..', 'bench', 'RESULTS.md');
  const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const at = previous.indexOf(KEPT_SECTION);
  fs.writeFileSync(file, at === -1 ? markdown : `${markdown.trimEnd()}\n${previous.slice(at)}`);
  return file;
}
