import { createDb, dropDatabase } from '../../shared/db/knex';
import { migrations } from '../../shared/db/migrations';
import { prepareDatabase } from '../../shared/db/prepare';

/**
 * In Kubernetes every new pod runs the migrations before its process starts (an init
 * container), so a rollout starts several runs on one database at once: each must wait
 * for the one ahead of it and then succeed, finding nothing left to do.
 */
describe('migrations', () => {
  it('run concurrently on a new database: every run succeeds and each migration is applied once', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.pathname = `${url.pathname}_migrate_race`;
    const databaseUrl = url.toString();
    await dropDatabase(databaseUrl);
    try {
      const runs = await Promise.allSettled(Array.from({ length: 4 }, () => prepareDatabase(databaseUrl)));
      expect(runs.map((r) => (r.status === 'rejected' ? String(r.reason) : r.status))).toEqual(Array(4).fill('fulfilled'));

      const db = createDb(databaseUrl, { poolMax: 1 });
      try {
        const applied = (await db('knex_migrations').select('name').orderBy('id')).map((r: { name: string }) => r.name);
        expect(applied).toEqual(migrations.map(([name]) => name));
        expect(await db('knex_migrations_lock').select('is_locked')).toEqual([{ is_locked: 0 }]);
      } finally {
        await db.destroy();
      }
    } finally {
      await dropDatabase(databaseUrl);
    }
  });
});
