import type { Knex } from 'knex';

/**
 * Outbound webhooks. `webhooks`: a team's endpoints, each with its signing secret, sealed with
 * APP_KEY (and the
 * previous one while a rotation's grace period lasts). `webhook_messages` is the outbox: a
 * row written in the same transaction as the change it reports, so no change is ever
 * reported without having happened, nor happens without being reported, whatever process
 * dies when. `webhook_deliveries`: one per message and endpoint, the state of its delivery;
 * `webhook_attempts`: each try and its answer. The webhook worker relays due deliveries
 * from Postgres to its queue (`relayed_at`), so the queue never holds the only copy.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE webhooks (
    id bigserial PRIMARY KEY,
    uid text NOT NULL UNIQUE,
    team_id bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    url text NOT NULL,
    event_types text[],
    description text,
    is_active boolean NOT NULL DEFAULT true,
    secret_enc text NOT NULL,
    previous_secret_enc text,
    previous_secret_expires_at timestamptz,
    failing_since timestamptz,
    disabled_reason text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
  )`);
  await knex.raw('CREATE INDEX webhooks_team ON webhooks (team_id, id) WHERE deleted_at IS NULL');
  await knex.raw(`CREATE TABLE webhook_messages (
    id bigserial PRIMARY KEY,
    uid text NOT NULL UNIQUE,
    team_id bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    type text NOT NULL,
    resource text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`);
  await knex.raw('CREATE INDEX webhook_messages_created_brin ON webhook_messages USING brin (created_at)');
  await knex.raw(`CREATE TABLE webhook_deliveries (
    id bigserial PRIMARY KEY,
    uid text NOT NULL UNIQUE,
    webhook_id bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    message_id bigint NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
    resource text NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    relayed_at timestamptz,
    relays integer NOT NULL DEFAULT 0,
    last_status_code integer,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`);
  await knex.raw("CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'");
  await knex.raw("CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (webhook_id) WHERE status = 'pending' AND relayed_at IS NOT NULL");
  await knex.raw("CREATE INDEX webhook_deliveries_resource ON webhook_deliveries (webhook_id, resource, message_id) WHERE status = 'pending'");
  await knex.raw('CREATE INDEX webhook_deliveries_listing ON webhook_deliveries (webhook_id, id DESC)');
  await knex.raw(`CREATE TABLE webhook_attempts (
    id bigserial PRIMARY KEY,
    delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt integer NOT NULL,
    status_code integer,
    duration_ms integer NOT NULL,
    response_body text,
    error text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`);
  await knex.raw('CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempt)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE webhook_attempts, webhook_deliveries, webhook_messages, webhooks');
}
