import type { Knex } from 'knex';

/**
 * Accounts for the dashboard: each user has a role in their team (owner, admin, member), an
 * optional password (argon2id), and signs in by an emailed one-time link; a signed-in
 * browser holds a session. Sessions and links are stored as SHA-256 of their secret only.
 * The first user of every existing team becomes its owner; any other user a member.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("ALTER TABLE users ADD COLUMN role text NOT NULL DEFAULT 'member'");
  await knex.raw("ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('owner', 'admin', 'member'))");
  await knex.raw('ALTER TABLE users ADD COLUMN password_hash text');
  await knex.raw('ALTER TABLE users ADD COLUMN last_sign_in_at timestamptz');
  await knex.raw('ALTER TABLE users ADD COLUMN invited_by bigint REFERENCES users (id) ON DELETE SET NULL');
  await knex.raw("UPDATE users u SET role = 'owner' WHERE u.id = (SELECT min(id) FROM users f WHERE f.team_id = u.team_id)");

  await knex.schema.createTable('sessions', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.bigInteger('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('secret_hash').notNullable().unique();
    t.text('user_agent').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
  });
  await knex.raw('CREATE INDEX sessions_user_live ON sessions (user_id) WHERE revoked_at IS NULL');

  await knex.schema.createTable('sign_in_links', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.text('purpose').notNullable();
    t.bigInteger('user_id').nullable().references('users.id').onDelete('CASCADE');
    t.text('email').notNullable();
    // For a sign-up: the name and team name given, made into a team when the link is used.
    t.jsonb('sign_up').nullable();
    t.text('token_hash').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true }).nullable();
    // When the mail worker sent it: a job run again after that sends nothing.
    t.timestamp('mailed_at', { useTz: true }).nullable();
  });
  await knex.raw("ALTER TABLE sign_in_links ADD CONSTRAINT sign_in_links_purpose_check CHECK (purpose IN ('sign_in', 'invite', 'sign_up'))");
  await knex.raw('CREATE INDEX sign_in_links_expiry ON sign_in_links (expires_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sign_in_links');
  await knex.schema.dropTable('sessions');
  await knex.raw('ALTER TABLE users DROP COLUMN invited_by, DROP COLUMN last_sign_in_at, DROP COLUMN password_hash, DROP COLUMN role');
}
