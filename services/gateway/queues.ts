import type { Logger } from '../../shared/logging/logger';
import { type JobContract, Producer } from '../../shared/queues/queues';
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
  ) {}

  producer<T extends object>(contract: JobContract<T>): Producer<T> {
    let producer = this.producers.get(contract.queue);
    if (!producer) {
      producer = new Producer(contract as JobContract<object>, this.redis, this.prefix, this.logger);
      this.producers.set(contract.queue, producer);
    }
    return producer as unknown as Producer<T>;
  }

  async close(): Promise<void> {
    await Promise.all([...this.producers.values()].map((p) => p.close()));
  }
}
