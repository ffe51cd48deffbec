import type { Knex } from 'knex';
import { migrations } from './migrations';

class ListedMigrationSource implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    return migrations.map(([name]) => name);
  }
  getMigrationName(name: string): string {
    return name;
  }
  async getMigration(name: string): Promise<Knex.Migration> {
    const found = migrations.find(([n]) => n === name);
    if (!found) throw new Error(`Unknown migration ${name}`);
    return found[1];
  }
}

/** Runs pending migrations; knex's lock table keeps concurrent starts from racing. */
export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: new ListedMigrationSource() })) as [number, string[]];
  return applied;
}
