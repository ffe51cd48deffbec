import Joi from 'joi';
import { createTeamWithOwner, findTeam, findUserByEmail, insertTokenRow, listTeams, listTokens, PLAN_IDS, revokeToken, setTeamPlan } from '../../shared/accounts/accounts.repository';
import { hashToken } from '../../shared/accounts/tokens';
import { createSignInLink, linkToken, signInUrl } from '../../shared/accounts/sign-in-links';
import { deploymentOf } from '../../shared/db/deployment';
import { type AccountMailJob, accountMailJob, newAccountMailJobId } from '../../shared/queues/account-mail.job';
import { Producer } from '../../shared/queues/queues';
import { publishInvalidations } from '../../shared/cache/invalidation';
import { type Config, loadConfigOrExit } from '../../shared/config/config';
import { createDb, type Knex } from '../../shared/db/knex';
import { prepareDatabase } from '../../shared/db/prepare';
import { postgresProblem } from '../../shared/lifecycle/reachability';
import { createLogger } from '../../shared/logging/logger';
import { closeRedis, createRedis } from '../../shared/queues/redis';

/**
 * Operator commands, for the server's shell. Results are one JSON object on stdout;
 * problems go to stderr with a non-zero exit (2: bad arguments, 1: anything else).
 */
const USAGE = `usage:
  npm run admin -- migrate
  npm run admin -- create-team --name NAME --email EMAIL [--plan free|pro|business|unlimited] [--event-limit N] [--user-name NAME]
  npm run admin -- list-teams
  npm run admin -- set-plan --team team_… --plan free|pro|business|unlimited [--event-limit N|none]
  npm run admin -- create-token --team team_… [--name NAME]
  npm run admin -- list-tokens --team team_…
  npm run admin -- revoke-token (--token-id tok_… | --token cst_…)
  npm run admin -- sign-in-link --email EMAIL [--print]
  npm run admin -- help

create-team prints team_id, user_id, plan, event_limit (the monthly event limit in effect:
--event-limit when given, else the plan's; null: none), event_limit_override (--event-limit,
or null) and the token, shown only once.
set-plan moves a team to another plan (its rate limits, email quotas and monthly event
limit); --event-limit sets the team's own monthly event limit, or with none goes back to
the plan's. Gateways apply it within seconds.
create-token makes another API token for the team's owner (a lost token is replaced this
way), shown only once; list-tokens shows a team's tokens without their secrets;
revoke-token revokes one by its id, or by its value when it has leaked.
sign-in-link emails a user (a team's owner made by create-team, say) a one-time link that
signs them in to the dashboard at /app (the mail worker sends it; it works once, for 15
minutes); with --print the link is printed here instead of emailed (a machine without mail).`;

/** Flags that take no value (`--print`). */
const SWITCHES = new Set(['print']);

function parseFlags(args: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    if (eq > 0) {
      flags[arg.slice(2, eq)] = arg.slice(eq + 1);
    } else if (SWITCHES.has(arg.slice(2))) {
      flags[arg.slice(2)] = 'true';
    } else {
      const value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new Error(`${arg} needs a value`);
      flags[arg.slice(2)] = value;
      i++;
    }
  }
  return flags;
}

const teamId = Joi.string().pattern(/^team_[0-9A-Za-z]{16}$/).messages({ 'string.pattern.base': '--team must be a team id (team_ and 16 letters or digits): see list-teams' });

const FLAGS: Record<string, Joi.ObjectSchema> = {
  migrate: Joi.object({}),
  'list-teams': Joi.object({}),
  'create-team': Joi.object({
    name: Joi.string().trim().min(1).max(255).required(),
    email: Joi.string().trim().email({ tlds: false }).max(255).required(),
    plan: Joi.string().valid(...PLAN_IDS).default('free'),
    'event-limit': Joi.number().integer().min(0).max(100000000),
    'user-name': Joi.string().trim().min(1).max(255),
  }),
  'set-plan': Joi.object({
    team: teamId.required(),
    plan: Joi.string().valid(...PLAN_IDS).required(),
    'event-limit': Joi.alternatives(Joi.string().valid('none'), Joi.number().integer().min(0).max(100000000)),
  }),
  'create-token': Joi.object({ team: teamId.required(), name: Joi.string().trim().min(1).max(100).default('admin') }),
  'list-tokens': Joi.object({ team: teamId.required() }),
  'revoke-token': Joi.object({
    'token-id': Joi.string().pattern(/^tok_[0-9A-Za-z]{16}$/).messages({ 'string.pattern.base': '--token-id must be a token id (tok_…): see list-tokens' }),
    token: Joi.string().pattern(/^cs[tx]_[0-9A-Za-z]{40}$/).messages({ 'string.pattern.base': '--token must be a whole token (cst_… or csx_…)' }),
  })
    .xor('token-id', 'token')
    .messages({ 'object.missing': 'give --token-id or --token', 'object.xor': 'give --token-id or --token, not both' }),
};

FLAGS['sign-in-link'] = Joi.object({ email: Joi.string().trim().email({ tlds: false }).max(254).required(), print: Joi.boolean().default(false) });

class UsageError extends Error {}

function fail(message: string, code = 2): never {
  process.stderr.write(code === 2 ? `${message}\n${USAGE}\n` : `${message}\n`);
  process.exit(code);
}

const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);

async function team(db: Knex, publicId: string) {
  const found = await findTeam(db, publicId.slice('team_'.length));
  if (!found) throw new UsageError(`no team ${publicId}: see list-teams`);
  return found;
}

/** Gateways cache tokens for a few seconds: tell them these users' tokens changed. */
async function announceRevoked(config: Config, ...userIds: number[]): Promise<boolean> {
  const redis = createRedis(config.redis, 'client', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  redis.on('error', () => undefined);
  const logger = createLogger('admin', 'silent');
  try {
    await redis.connect();
    await publishInvalidations(redis, config.queuePrefix, userIds.map((id) => ({ kind: 'user' as const, id })), logger);
    return true;
  } catch {
    return false;
  } finally {
    await closeRedis(redis);
  }
}

/** Makes the link and queues its email in one transaction (the dashboard's sign-in does the same). */
async function queueSignInLink(config: Config, db: Knex, user: { id: number; email: string }): Promise<void> {
  const redis = createRedis(config.redis, 'client', { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  const logger = createLogger('admin', 'silent');
  const deployment = deploymentOf(db);
  let producer: Producer<AccountMailJob> | undefined;
  try {
    await redis.connect().catch(() => {
      throw new Error("Redis could not be reached (REDIS_URL): the link is sent through the mail worker's queue");
    });
    // Made once connected: its queue would start connecting the connection itself.
    producer = new Producer(accountMailJob, redis, config.queuePrefix, logger, deployment);
    const queue = producer;
    await deployment.get();
    await db.transaction(async (trx) => {
      const linkUid = await createSignInLink(trx, config.appKey, { purpose: 'sign_in', email: user.email, userId: user.id }, new Date());
      await queue.add('sign-in-link', { linkUid }, { jobId: newAccountMailJobId() });
    });
  } finally {
    await producer?.close();
    await closeRedis(redis);
  }
}

async function run(command: string, flags: Record<string, string>, config: Config, db: Knex): Promise<void> {
  switch (command) {
    case 'migrate':
      await prepareDatabase(config.databaseUrl);
      return print({ migrated: true });
    case 'list-teams':
      return print({
        teams: (await listTeams(db)).map((t) => ({
          team_id: `team_${t.uid}`,
          name: t.name,
          plan: t.plan_id,
          owner_email: t.owner_email,
          api_tokens: t.live_tokens,
          created_at: t.created_at,
        })),
      });
    case 'create-team': {
      try {
        const created = await createTeamWithOwner(db, {
          name: flags.name,
          email: flags.email,
          userName: flags['user-name'],
          plan: flags.plan,
          eventLimit: flags['event-limit'] === undefined ? null : Number(flags['event-limit']),
        });
        return print({
          team_id: `team_${created.teamUid}`,
          user_id: `usr_${created.userUid}`,
          plan: flags.plan,
          // The limit in effect, not the override alone: a free team without one has 50, not none.
          event_limit: created.eventLimit,
          event_limit_override: flags['event-limit'] === undefined ? null : Number(flags['event-limit']),
          token: created.token,
          note: 'The token is shown only once: store it now.',
        });
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw new UsageError(`a user with the email ${flags.email} already exists`);
        throw err;
      }
    }
    case 'set-plan': {
      const found = await team(db, flags.team);
      const limit = flags['event-limit'];
      const changed = await setTeamPlan(db, found.id, flags.plan, limit === undefined ? undefined : limit === 'none' ? null : Number(limit));
      const told = await announceRevoked(config, ...changed.userIds);
      return print({
        team_id: flags.team,
        plan: flags.plan,
        event_limit: changed.eventLimit,
        ...(told ? {} : { note: 'Redis could not be reached: gateways may apply the old limits for up to 20 more seconds (their cache).' }),
      });
    }
    case 'create-token': {
      const found = await team(db, flags.team);
      const { token, uid } = await insertTokenRow(db, { userId: found.owner_id, teamId: found.id, kind: 'api', name: flags.name });
      return print({ team_id: flags.team, token_id: `tok_${uid}`, name: flags.name, token, note: 'The token is shown only once: store it now.' });
    }
    case 'list-tokens': {
      const found = await team(db, flags.team);
      return print({
        team_id: flags.team,
        tokens: (await listTokens(db, found.id)).map((t) => ({
          token_id: `tok_${t.uid}`,
          kind: t.kind,
          name: t.name,
          created_at: t.created_at,
          last_used_at: t.last_used_at,
          revoked_at: t.revoked_at,
        })),
      });
    }
    case 'revoke-token': {
      const revoked = await revokeToken(db, flags.token ? { hash: hashToken(flags.token) } : { uid: flags['token-id'].slice('tok_'.length) });
      if (!revoked) throw new UsageError('no live token matches (already revoked, or never issued): see list-tokens');
      const told = await announceRevoked(config, revoked.userId);
      return print({
        token_id: `tok_${revoked.uid}`,
        revoked: true,
        ...(told ? {} : { note: 'Redis could not be reached: gateways may accept the token for up to 20 more seconds (their cache).' }),
      });
    }
    case 'sign-in-link': {
      const user = await findUserByEmail(db, flags.email);
      if (!user) throw new UsageError(`no user has the email ${flags.email}: see list-teams`);
      if (String(flags.print) === 'true') {
        const uid = await createSignInLink(db, config.appKey, { purpose: 'sign_in', email: user.email, userId: user.id }, new Date());
        return print({ email: user.email, url: signInUrl(config.publicBaseUrl, linkToken(config.appKey, uid)), note: 'The link works once, for 15 minutes.' });
      }
      await queueSignInLink(config, db, user);
      return print({ email: user.email, sent: true, note: 'The mail worker sends it; the link works once, for 15 minutes.' });
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (['help', '--help', '-h'].includes(command) || rest.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!command) fail('no command given');
  const schema = FLAGS[command];
  if (!schema) fail(`unknown command "${command}"`);
  let flags: Record<string, string>;
  try {
    flags = parseFlags(rest);
  } catch (err) {
    fail((err as Error).message);
  }
  const { value, error } = schema.validate(flags, { abortEarly: false });
  if (error) fail(error.details.map((d) => d.message.replace(/"/g, '')).join('\n'));

  const config = loadConfigOrExit();
  try {
    if (command !== 'migrate') await prepareDatabase(config.databaseUrl);
  } catch (err) {
    fail(postgresProblem(err, config.databaseUrl) ?? `could not prepare the database: ${(err as Error).message}`, 1);
  }
  const db = createDb(config.databaseUrl, { poolMax: 1, applicationName: 'admin' });
  try {
    await run(command, value as Record<string, string>, config, db);
  } catch (err) {
    if (err instanceof UsageError) fail(err.message, 2);
    fail(postgresProblem(err, config.databaseUrl) ?? `admin failed: ${(err as Error).message}`, 1);
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  process.stderr.write(`admin failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
