import fs from 'node:fs';
import http from 'node:http';
import { signPayload } from '../../shared/webhooks/signature';

/**
 * Baseline of bench/webhooks: a bare script in its own process, as a person would write one,
 * POSTing the same bodies signed as Standard Webhooks over a keep-alive agent, a few at a
 * time, as fast as the endpoint answers. Arguments: a JSON file of bodies, the endpoint's
 * URL, the signing secret and how many at once. Prints "sending" just before the first
 * request goes out, so the clock starts there.
 */
/** POSTs each body, `concurrency` at a time over one keep-alive agent, until all are answered. */
export async function postAll(url: string, secret: string, bodies: string[], concurrency: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const post = (body: string, i: number) =>
    new Promise<void>((resolve, reject) => {
      const id = `msg_${i}`;
      const timestamp = Math.floor(Date.now() / 1000);
      const req = http.request(url, {
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signPayload(secret, id, timestamp, body) },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const i = next++;
        await post(bodies[i], i);
      }
    }),
  );
  agent.destroy();
}

async function main(): Promise<void> {
  const [file, url, secret, concurrency] = process.argv.slice(2);
  const bodies = JSON.parse(fs.readFileSync(file, 'utf8')) as string[];
  process.stdout.write('sending\n');
  await postAll(url, secret, bodies, Number(concurrency));
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
