import { EndpointTurns } from '../../services/webhook-worker/endpoint-turns';

/**
 * The webhook worker's turns per endpoint: 4 attempts at once, the oldest job served first,
 * at most a few jobs sending to one endpoint, and an attempt that waits only while the
 * endpoint keeps freeing turns (the protection that keeps a slow endpoint from filling the
 * worker's places).
 */
const A = 'https://a.example';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('EndpointTurns', () => {
  it('gives 4 turns at once, then hands a freed one to the oldest job waiting, whatever the order they came in', async () => {
    const turns = new EndpointTurns(4, 4, 100);
    for (let i = 0; i < 4; i++) expect(await turns.take(A, 1)).toBe(true);
    const order: number[] = [];
    const waits = [3, 2, 3, 2].map((rank) => turns.take(A, rank).then((got) => got && order.push(rank)));
    for (let i = 0; i < 4; i++) {
      turns.give(A);
      await sleep(1);
    }
    await Promise.all(waits);
    expect(order).toEqual([2, 2, 3, 3]);
  });

  it('lets a job wait for as long as the endpoint keeps freeing turns', async () => {
    const turns = new EndpointTurns(1, 4, 100);
    expect(await turns.take(A, 1)).toBe(true);
    const young = turns.take(A, 3);
    // An older job keeps the endpoint busy for 400 ms, a turn freed every 40 ms.
    const old = (async () => {
      for (let i = 0; i < 10; i++) {
        const next = turns.take(A, 2);
        await sleep(40);
        turns.give(A);
        expect(await next).toBe(true);
      }
    })();
    await sleep(40);
    turns.give(A);
    await old;
    turns.give(A);
    expect(await young).toBe(true);
    turns.give(A);
  });

  it('tells an attempt to give its place up once the endpoint has freed no turn for the stall time', async () => {
    const turns = new EndpointTurns(4, 4, 100);
    for (let i = 0; i < 4; i++) await turns.take(A, 1);
    const started = Date.now();
    expect(await turns.take(A, 2)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(Date.now() - started).toBeLessThan(1000);
    // The turns of the other endpoints are their own.
    expect(await turns.take('https://b.example', 2)).toBe(true);
  });

  it('has a few jobs send to one endpoint at a time: another is refused a place at once', () => {
    const turns = new EndpointTurns(4, 2, 100);
    expect(turns.join(A, 1)).toBe(true);
    expect(turns.join(A, 2)).toBe(true);
    expect(turns.join(A, 1)).toBe(true);
    expect(turns.join(A, 3)).toBe(false);
    expect(turns.join('https://b.example', 3)).toBe(true);
    turns.leave(A, 1);
    expect(turns.join(A, 3)).toBe(true);
  });
});

describe('EndpointTurns under many jobs at once', () => {
  it('never lets more than the limit in flight to one endpoint, whatever the order of takes, gives and give-ups', async () => {
    const turns = new EndpointTurns(4, 64, 5);
    let inFlight = 0;
    let most = 0;
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    // 40 jobs of ranks 1-40, 6 attempts each, holding their turn for 0-3 ms.
    await Promise.all(
      Array.from({ length: 40 * 6 }, async (_, n) => {
        await sleep(Math.floor(random() * 20));
        if (!(await turns.take(A, 1 + (n % 40)))) return;
        inFlight++;
        most = Math.max(most, inFlight, turns.inFlight(A));
        await sleep(Math.floor(random() * 4));
        inFlight--;
        turns.give(A);
      }),
    );
    expect(most).toBe(4);
    expect(turns.inFlight(A)).toBe(0);
  });
});
