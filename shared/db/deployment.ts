import type { Knex } from './knex';

/**
 * The database's own id (the `deployment` row, made with the database by its migrations).
 * Jobs carry it, so a worker can tell a job of its own database from one queued by another
 * deployment on the same Redis and QUEUE_PREFIX (see createWorker).
 */
export class DeploymentId {
  private value: string | undefined;
  private loading: Promise<string> | null = null;

  constructor(private readonly db: Knex) {}

  /** Reads it once; a failed read (Postgres away) is tried again on the next call. */
  get(): Promise<string> {
    if (this.value !== undefined) return Promise.resolve(this.value);
    this.loading ??= this.db('deployment')
      .first<{ id: string } | undefined>('id')
      .then((row) => {
        if (!row) throw new Error('the database has no deployment row: run the migrations');
        this.value = row.id;
        return row.id;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  /** The id when it has been read; never waits (a job queued before that goes unstamped, which any worker takes). */
  peek(): string | undefined {
    if (this.value === undefined) this.get().catch(() => undefined);
    return this.value;
  }
}

const byPool = new WeakMap<Knex, DeploymentId>();

/** One DeploymentId per pool, so every producer and worker of a process reads it once. */
export function deploymentOf(db: Knex): DeploymentId {
  let found = byPool.get(db);
  if (!found) {
    found = new DeploymentId(db);
    byPool.set(db, found);
  }
  return found;
}
