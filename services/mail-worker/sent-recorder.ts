import { isDbUnavailableError, type Knex } from '../../shared/db/knex';
import type { Logger } from '../../shared/logging/logger';
import { markSent } from './deliveries.repository';

interface Pending {
  id: number;
  token: string;
  messageId: string;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

/** Tries for an error that is not an outage (a bug would not go away). */
const RETRIES = 5;
/** Between tries: 250 ms doubling to this ceiling. */
const MAX_DELAY_MS = 5000;

/**
 * Records accepted messages as sent, as soon as each is accepted. While one write is in
 * flight the next acceptances gather and go in the following write (one statement for
 * all of them), so under load a commit covers many messages and when idle each message
 * is recorded on its own at once. Recording is what keeps a message from going out
 * again, so an unreachable database is waited for here, however long it stays away,
 * rather than turned into a resend: the job keeps its lock meanwhile (Redis renews it),
 * and no other attempt can take its messages.
 */
export class SentRecorder {
  private pending: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly db: Knex,
    private readonly log: Logger,
  ) {}

  /** Resolves true once recorded, false when another attempt had taken the row over. */
  record(id: number, token: string, messageId: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, token, messageId, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.pending.length) {
      const batch = this.pending.splice(0);
      try {
        const recorded = await this.write(batch);
        for (const p of batch) p.resolve(recorded.has(p.id));
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.flushing = false;
  }

  private async write(batch: Pending[]): Promise<Set<number>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await markSent(this.db, batch);
      } catch (err) {
        if (attempt >= RETRIES && !isDbUnavailableError(err)) throw err;
        this.log.warn({ count: batch.length, err: (err as Error).message, attempt }, 'could not record sent messages yet; retrying');
        await new Promise<void>((resolve) => {
          setTimeout(resolve, Math.min(MAX_DELAY_MS, 250 * 2 ** (attempt - 1)));
        });
      }
    }
  }
}
