import Joi from 'joi';
import { createTeamWithOwner, PLAN_IDS } from '../../shared/accounts/accounts.repository';
import { loadConfigOrExit } from '../../shared/config/config';
import { createDb } from '../../shared/db/knex';
import { prepareDatabase } from '../../shared/db/prepare';

/**
 * Operator commands:
 *   migrate
 *   create-team --name NAME --email EMAIL [--plan free|pro|business|unlimited] [--event-limit N] [--user-name NAME]
 *   help (or --help)
 * Results are one JSON object on stdout; problems go to stderr with a non-zero exit.
 */
const USAGE = `usage:
  npm run admin -- migrate
  npm run admin -- create-team --name NAME --email EMAIL [--plan free|pro|business|unlimited] [--event-limit N] [--user-name NAME]
  npm run admin -- help

create-team prints team_id, user_id, plan, event_limit (the monthly event limit in effect:
--event-limit when given, else the plan's; null: none), event_limit_override (--event-limit,
or null) and the token, shown only once.`;

function parseFlags(args: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    if (eq > 0) {
      flags[arg.slice(2, eq)] = arg.slice(eq + 1);
    } else {
      const value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new Error(`${arg} needs a value`);
      flags[arg.slice(2)] = value;
      i++;
    }
  }
  return flags;
}

const createTeamFlags = Joi.object({
  name: Joi.string().trim().min(1).max(255).required(),
  email: Joi.string().trim().email({ tlds: false }).max(255).required(),
  plan: Joi.string().valid(...PLAN_IDS).default('free'),
  'event-limit': Joi.number().integer().min(0).max(100000000),
  'user-name': Joi.string().trim().min(1).max(255),
});

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (['help', '--help', '-h'].includes(command) || rest.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!command) fail('no command given');
  const config = loadConfigOrExit();
  if (command === 'migrate') {
    await prepareDatabase(config.databaseUrl);
    process.stdout.write(`${JSON.stringify({ migrated: true })}\n`);
    return;
  }
  if (command !== 'create-team') fail(`unknown command "${command}"`);

  let flags: Record<string, string>;
  try {
    flags = parseFlags(rest);
  } catch (err) {
    fail((err as Error).message);
  }
  const { value, error } = createTeamFlags.validate(flags, { abortEarly: false });
  if (error) fail(error.details.map((d) => d.message.replace(/"/g, '')).join('\n'));

  await prepareDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, { poolMax: 1, applicationName: 'admin' });
  try {
    const created = await createTeamWithOwner(db, {
      name: value.name,
      email: value.email,
      userName: value['user-name'],
      plan: value.plan,
      eventLimit: value['event-limit'] ?? null,
    });
    process.stdout.write(
      `${JSON.stringify({
        team_id: `team_${created.teamUid}`,
        user_id: `usr_${created.userUid}`,
        plan: value.plan,
        // The limit in effect, not the override alone: a free team without one has 50, not none.
        event_limit: created.eventLimit,
        event_limit_override: value['event-limit'] ?? null,
        token: created.token,
        note: 'The token is shown only once: store it now.',
      })}\n`,
    );
  } catch (err) {
    if ((err as { code?: string }).code === '23505') fail(`a user with the email ${value.email} already exists`);
    throw err;
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  process.stderr.write(`admin failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
