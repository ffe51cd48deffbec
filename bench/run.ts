import os from 'node:os';
import { benchApi } from './api';
import { benchDrain } from './drain';
import { benchIngest } from './ingest';
import { benchPublic } from './public';
import { benchExtract } from './extract';
import { benchMail } from './mail';
import { benchWebhooks } from './webhooks';
import { type BenchRow, toMarkdown, writeResults } from './lib/report';

/**
 * `npm run bench [-- name…]`: runs the benchmarks, prints one markdown table (figure,
 * baseline from the same run, ratio, goal) and writes it to bench/RESULTS.md.
 */
// The ingest rate feeds the drain's second figure (drain must outpace ingest), and the
// ingest's submissions per job the drain's jobs.
let ingest: { rate: number; groupSize: number } | undefined;
const BENCHES: Record<string, () => Promise<BenchRow[]>> = {
  api: benchApi,
  public: benchPublic,
  ingest: async () => {
    const result = await benchIngest();
    // the gateway alone's figures (none when only the one-machine mode ran)
    if (result.ingestRate !== undefined && result.groupSize !== undefined) ingest = { rate: result.ingestRate, groupSize: result.groupSize };
    return result.rows;
  },
  drain: () => benchDrain(ingest),
  extract: benchExtract,
  mail: benchMail,
  webhooks: benchWebhooks,
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const names = wanted.length ? wanted : Object.keys(BENCHES);
  for (const n of names) if (!BENCHES[n]) throw new Error(`unknown benchmark "${n}" (have: ${Object.keys(BENCHES).join(', ')})`);
  const rows: BenchRow[] = [];
  for (const name of names) {
    console.error(`running bench/${name}…`);
    rows.push(...(await BENCHES[name]()));
  }
  const meta = `Run ${new Date().toISOString()} on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}. Each figure beside its baseline measured in the same run; ratio = ours ÷ baseline.`;
  const markdown = toMarkdown(rows, meta);
  process.stdout.write(markdown);
  console.error(`written to ${writeResults(markdown)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
