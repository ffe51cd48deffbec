import type { Knex } from 'knex';

/**
 * Teams, users, tokens, plans, calendars, events and the monthly usage counter.
 * Indexes are chosen for listing at a million events per team: the listing order
 * (date_start, id) per team and per calendar, a GiST range index for "ongoing" events
 * (so range=upcoming never scans the past), and trigram indexes for `search`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await knex.raw('CREATE EXTENSION IF NOT EXISTS btree_gist');

  await knex.schema.createTable('plans', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.integer('monthly_event_limit').nullable(); // null: unlimited
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex('plans').insert([
    { id: 'free', name: 'Free', monthly_event_limit: 50 },
    { id: 'pro', name: 'Pro', monthly_event_limit: 1000 },
    { id: 'business', name: 'Business', monthly_event_limit: 10000 },
    { id: 'unlimited', name: 'Unlimited', monthly_event_limit: null },
  ]);

  await knex.schema.createTable('teams', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.text('name').notNullable();
    t.text('plan_id').notNullable().references('plans.id');
    t.integer('event_limit_override').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('ALTER TABLE teams ADD CONSTRAINT teams_event_limit_override_check CHECK (event_limit_override >= 0)');

  await knex.schema.createTable('users', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('email').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['team_id']);
  });
  await knex.raw('CREATE UNIQUE INDEX users_email_unique ON users (lower(email))');

  await knex.schema.createTable('api_tokens', (t) => {
    t.bigIncrements('id');
    t.bigInteger('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('name').nullable();
    t.text('token_hash').notNullable().unique(); // sha256 hex of the token; the token itself is never stored
    t.timestamp('last_used_at', { useTz: true }).nullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'kind']);
  });
  await knex.raw("ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_kind_check CHECK (kind IN ('api', 'extension'))");

  await knex.schema.createTable('calendars', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('internal_name').nullable();
    t.text('description').notNullable().defaultTo('');
    t.text('timezone').notNullable();
    t.smallint('week_begins').notNullable().defaultTo(1);
    t.text('short_link').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true }).nullable();
  });
  await knex.raw('CREATE INDEX calendars_team ON calendars (team_id, id) WHERE deleted_at IS NULL');

  await knex.schema.createTable('events', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.bigInteger('calendar_id').notNullable().references('calendars.id').onDelete('CASCADE');
    t.text('short_link').nullable();
    t.text('title').notNullable();
    t.text('internal_name').nullable();
    t.text('description').nullable();
    t.text('location').nullable();
    t.text('location_url').nullable();
    t.text('image_url').nullable();
    t.boolean('is_draft').notNullable().defaultTo(false);
    t.boolean('is_all_day').notNullable().defaultTo(false);
    t.boolean('has_rsvp').notNullable().defaultTo(false);
    t.boolean('has_calendar_invites').notNullable().defaultTo(false);
    t.integer('rsvp_limit').nullable();
    t.text('recurrence_rule').nullable();
    t.text('series_title').nullable();
    // Timed events: the instants. All-day events: UTC midnight of the first and the
    // inclusive last day. ends_at is the real end instant (all-day: midnight after the last
    // day in the event's zone), used by range=upcoming/past.
    t.timestamp('date_start', { useTz: true }).notNullable();
    t.timestamp('date_end', { useTz: true }).notNullable();
    t.timestamp('ends_at', { useTz: true }).notNullable();
    t.text('timezone').notNullable();
    t.text('busy_type').nullable();
    t.integer('reminder_before').nullable();
    t.text('status').notNullable().defaultTo('approved');
    t.text('access_code_hash').nullable();
    t.integer('sequence').notNullable().defaultTo(0); // iTIP SEQUENCE, only ever increases
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true }).nullable();
  });
  await knex.raw(`
    ALTER TABLE events
      ADD CONSTRAINT events_status_check CHECK (status IN ('approved', 'pending', 'rejected')),
      ADD CONSTRAINT events_busy_type_check CHECK (busy_type IN ('busy', 'free')),
      ADD CONSTRAINT events_dates_check CHECK (date_end >= date_start AND ends_at >= date_start)
  `);
  await knex.raw('CREATE INDEX events_team_listing ON events (team_id, date_start, id) WHERE deleted_at IS NULL');
  await knex.raw('CREATE INDEX events_calendar_listing ON events (calendar_id, date_start, id) WHERE deleted_at IS NULL');
  await knex.raw(
    "CREATE INDEX events_team_ongoing ON events USING gist (team_id, tstzrange(date_start, ends_at, '[)')) WHERE deleted_at IS NULL",
  );
  await knex.raw('CREATE INDEX events_title_trgm ON events USING gin (title gin_trgm_ops) WHERE deleted_at IS NULL');
  await knex.raw(
    'CREATE INDEX events_internal_name_trgm ON events USING gin (internal_name gin_trgm_ops) WHERE deleted_at IS NULL AND internal_name IS NOT NULL',
  );

  // One namespace for the short links of events and calendars (/l/{slug} finds either).
  await knex.schema.createTable('short_links', (t) => {
    t.text('slug').primary(); // lower-cased
    t.bigInteger('event_id').nullable().references('events.id').onDelete('CASCADE');
    t.bigInteger('calendar_id').nullable().references('calendars.id').onDelete('CASCADE');
  });
  await knex.raw('ALTER TABLE short_links ADD CONSTRAINT short_links_owner_check CHECK ((event_id IS NULL) <> (calendar_id IS NULL))');
  await knex.raw('CREATE UNIQUE INDEX short_links_event ON short_links (event_id) WHERE event_id IS NOT NULL');
  await knex.raw('CREATE UNIQUE INDEX short_links_calendar ON short_links (calendar_id) WHERE calendar_id IS NOT NULL');

  await knex.schema.createTable('team_usage', (t) => {
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.text('period').notNullable(); // YYYY-MM, UTC
    t.integer('events_created').notNullable().defaultTo(0);
    t.primary(['team_id', 'period']);
  });

  // Reserves up to `wanted` event slots in the team's monthly allowance in one round trip.
  // The row lock makes concurrent creators queue, so the limit holds under any concurrency;
  // called inside the transaction that inserts the events, a rollback gives the slots back.
  await knex.raw(`
    CREATE FUNCTION reserve_event_slots(p_team_id bigint, p_period text, p_wanted int,
      OUT granted int, OUT current_count int, OUT event_limit int)
    LANGUAGE plpgsql AS $$
    BEGIN
      SELECT COALESCE(t.event_limit_override, p.monthly_event_limit) INTO event_limit
        FROM teams t JOIN plans p ON p.id = t.plan_id WHERE t.id = p_team_id;
      INSERT INTO team_usage (team_id, period, events_created) VALUES (p_team_id, p_period, 0)
        ON CONFLICT (team_id, period) DO NOTHING;
      SELECT events_created INTO current_count FROM team_usage
        WHERE team_id = p_team_id AND period = p_period FOR UPDATE;
      granted := CASE WHEN event_limit IS NULL THEN p_wanted
                      ELSE GREATEST(0, LEAST(p_wanted, event_limit - current_count)) END;
      IF granted > 0 THEN
        current_count := current_count + granted;
        UPDATE team_usage SET events_created = current_count WHERE team_id = p_team_id AND period = p_period;
      END IF;
    END $$
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS reserve_event_slots(bigint, text, int)');
  for (const table of ['team_usage', 'short_links', 'events', 'calendars', 'api_tokens', 'users', 'teams', 'plans']) {
    await knex.schema.dropTableIfExists(table);
  }
}
