import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SinkMessage {
  from: string;
  to: string[];
  raw: Buffer;
}

export interface BenchSink {
  url: string;
  count: number;
  /** performance.now() when the last message was accepted. */
  lastAt: number;
  /** Messages accepted since keep(true), kept whole (for the baseline to resend). */
  kept: SinkMessage[];
  keep(on: boolean): void;
  /** Resolves once `count` reaches n. */
  until(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The receiving end of bench/mail: a local smtp-server that accepts everything and does
 * no work beyond reading it, so ours and the baseline are measured against the same sink.
 */
export async function startBenchSink(): Promise<BenchSink> {
  let keeping = false;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const sink: BenchSink = {
    url: '',
    count: 0,
    lastAt: 0,
    kept: [],
    keep: (on) => {
      keeping = on;
    },
    until: (n, timeoutMs = 120_000) =>
      new Promise<void>((resolve, reject) => {
        if (sink.count >= n) return resolve();
        const timer = setTimeout(() => reject(new Error(`bench sink: ${sink.count} of ${n} messages after ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    maxClients: 1000,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => keeping && chunks.push(c));
      stream.on('end', () => {
        sink.count++;
        sink.lastAt = performance.now();
        if (keeping) {
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          sink.kept.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks) });
        }
        for (const w of waiters.filter((x) => sink.count >= x.n)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  sink.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  return sink;
}
