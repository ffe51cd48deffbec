import Joi from 'joi';
import { AppError } from '../../shared/errors/app-error';
import { createLogger } from '../../shared/logging/logger';
import { defineJob, Producer, QUEUES } from '../../shared/queues/queues';
import { closeRedis, createRedis } from '../../shared/queues/redis';
import { testEnv } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import { startWorker } from '../helpers/workers';
import { isolatedPrefix } from '../helpers/service-processes';

// A contract of the test's own on a queue name with a prefix of its own.
const contract = defineJob<{ n: number }>({ queue: QUEUES.extractions, schema: Joi.object({ n: Joi.number().required(), meta: Joi.object() }), defaults: { attempts: 2 } });
const prefix = isolatedPrefix('queues');
const logger = createLogger('queues-test', 'silent');

describe('queues', () => {
  it('carries a job from producer to worker, with the request id', async () => {
    const seen: Array<{ n: number; reqId?: string }> = [];
    const worker = await startWorker(
      () => ({
        contract,
        concurrency: 2,
        process: async (job) => {
          seen.push({ n: job.data.n, reqId: job.data.meta?.requestId });
          return job.data.n * 2;
        },
      }),
      { QUEUE_PREFIX: prefix },
    );
    const redis = createRedis(testEnv().REDIS_URL as string, 'client');
    await waitFor(() => redis.status === 'ready');
    const producer = new Producer(contract, redis, prefix, logger);
    try {
      const id = await producer.add('double', { n: 21, meta: { requestId: 'req-1' } });
      await waitFor(() => seen.length === 1, { what: 'the job to run' });
      expect(seen).toEqual([{ n: 21, reqId: 'req-1' }]);
      const job = await producer.queue.getJob(id);
      await waitFor(async () => (await job?.getState()) === 'completed');
      expect((await producer.queue.getJob(id))?.returnvalue).toBe(42);
      await expect(producer.add('bad', { n: 'x' } as never)).rejects.toThrow(/invalid extractions payload/);

      // A newer release's job, with a field this one does not know, runs on what it knows;
      // one that breaks what it knows still fails at once.
      const newer = await producer.queue.add('double', { n: 5, addedLater: { x: 1 } } as never);
      await waitFor(async () => (await producer.queue.getJob(newer.id as string))?.returnvalue === 10, { what: 'the newer job to run' });
      const broken = await producer.queue.add('double', { n: 'five', addedLater: true } as never);
      await waitFor(async () => (await producer.queue.getJob(broken.id as string))?.failedReason?.includes('invalid extractions payload'), { what: 'the broken job to fail' });
    } finally {
      await producer.queue.obliterate({ force: true });
      await producer.close();
      await worker.close();
      await closeRedis(redis);
    }
  });

  it('answers 503 at once when Redis cannot take the job', async () => {
    const redis = createRedis('redis://127.0.0.1:1', 'client', { retryStrategy: () => null });
    redis.on('error', () => undefined);
    const producer = new Producer(contract, redis, prefix, logger);
    try {
      const err = await producer.add('x', { n: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ status: 503, headers: { 'Retry-After': '5' } });
    } finally {
      await producer.close().catch(() => undefined);
      redis.disconnect();
    }
  });
});
