import { Queue } from 'bullmq';
import type { DeploymentId } from '../../shared/db/deployment';
import type { Logger } from '../../shared/logging/logger';
import { type JobContract, Producer, QUEUES } from '../../shared/queues/queues';
import type { Redis } from '../../shared/queues/redis';

/**
 * The gateway's producers, one per queue, made on first use and sharing the request-path
 * Redis connection (no offline queue: an add fails fast while Redis is away).
 */
export class GatewayQueues {
  private readonly producers = new Map<string, Producer<object>>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
    /** Stamped on every job, so only this database's workers run them. */
    private readonly deployment: DeploymentId,
  ) {}

  producer<T extends object>(contract: JobContract<T>): Producer<T> {
    let producer = this.producers.get(contract.queue);
    if (!producer) {
      producer = new Producer(contract as JobContract<object>, this.redis, this.prefix, this.logger, this.deployment);
      this.producers.set(contract.queue, producer);
    }
    return producer as unknown as Producer<T>;
  }

  private observed: Queue[] | null = null;

  /** Every queue, for looking at (depth metrics, the dashboard), on the same connection. */
  all(): Queue[] {
    this.observed ??= Object.values(QUEUES).map((name) => {
      const queue = new Queue(name, { connection: this.redis, prefix: this.prefix });
      queue.on('error', (err) => this.logger.debug({ err: err.message, queue: name }, 'queue connection error'));
      return queue;
    });
    return this.observed;
  }

  async close(): Promise<void> {
    await Promise.all([...this.producers.values()].map((p) => p.close()));
    if (this.observed) await Promise.all(this.observed.map((q) => q.close()));
  }
}
