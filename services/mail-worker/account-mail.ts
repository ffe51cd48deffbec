import mjml2html from 'mjml';
import { linkToken, type LinkPurpose, signInUrl } from '../../shared/accounts/sign-in-links';
import type { Knex } from '../../shared/db/knex';
import { type AccountMailJob, accountMailJob } from '../../shared/queues/account-mail.job';
import type { Logger } from '../../shared/logging/logger';
import type { WorkerContext, WorkerDefinition } from '../../shared/queues/worker';
import { parseTemplate, render, type Template } from './mail-template';
import type { MailTransport } from './mail.transport';
import { ACCENT, button, FONT, INK, MUTED, PAGE } from './message.layout';

/**
 * Account messages: a sign-in link, an invitation to a team, a sign-up to finish. The job
 * names the link; its row says to whom, for what, and whether it is still worth sending (a
 * link already used or expired is not sent; one already sent is not sent again).
 */
interface LinkRow {
  uid: string;
  purpose: LinkPurpose;
  email: string;
  expires_at: string;
  used_at: string | null;
  mailed_at: string | null;
  user_name: string | null;
  team_name: string | null;
  inviter_name: string | null;
  sign_up: { name: string; team_name: string } | null;
}

const SOURCE = `<mjml lang="en">
<mj-head>
  <mj-title>{{subject}}</mj-title>
  <mj-preview>{{lead}}</mj-preview>
  <mj-attributes>
    <mj-all font-family="${FONT}" />
    <mj-text font-size="16px" line-height="24px" color="${INK}" padding="0" />
  </mj-attributes>
</mj-head>
<mj-body width="600px" background-color="${PAGE}">
  <mj-section padding="20px 0 0"><mj-column><mj-spacer height="1px" /></mj-column></mj-section>
  <mj-section background-color="#ffffff" padding="24px" border-top="4px solid ${ACCENT}"><mj-column>
    <mj-text><h1 style="margin:0 0 12px;font-size:22px;line-height:28px;font-weight:700">{{heading}}</h1><p style="margin:0 0 16px">{{lead}}</p></mj-text>
    <mj-text>${button('{{url}}', '{{action}}', true)}</mj-text>
    <mj-text font-size="14px" line-height="20px" color="${MUTED}" padding="12px 0 0">{{note}}<br>If the button does not work, open this address: <a href="{{url}}" style="color:${ACCENT};word-break:break-all">{{url}}</a></mj-text>
  </mj-column></mj-section>
  <mj-section padding="16px 24px 32px"><mj-column>
    <mj-text font-size="13px" line-height="20px" color="${MUTED}" align="center">{{reason}}</mj-text>
  </mj-column></mj-section>
</mj-body>
</mjml>`;

let compiled: Promise<Template> | undefined;
/** Compiled once per process (MJML is slow), then filled by substitution. */
function template(): Promise<Template> {
  compiled ??= mjml2html(SOURCE, { validationLevel: 'strict', fonts: {} }).then(({ html, errors }) => {
    if (errors.length) throw new Error(`account message layout: ${errors.map((e) => e.formattedMessage).join('; ')}`);
    return parseTemplate(html.replace(/\r?\n/g, '\r\n'));
  });
  return compiled;
}

const minutes = (ms: number) => Math.max(1, Math.round(ms / 60_000));

/** The words of each kind of message. */
function wording(row: LinkRow, now: Date) {
  const left = new Date(row.expires_at).getTime() - now.getTime();
  const lasts = left > 2 * 86_400_000 ? `${Math.round(left / 86_400_000)} days` : left > 2 * 3_600_000 ? `${Math.round(left / 3_600_000)} hours` : `${minutes(left)} minutes`;
  const team = row.team_name ?? row.sign_up?.team_name ?? 'your team';
  switch (row.purpose) {
    case 'invite':
      return {
        subject: `You are invited to ${team}`,
        heading: `Join ${team}`,
        lead: `${row.inviter_name ?? 'A teammate'} invited you to manage calendars and events with ${team}.`,
        action: 'Accept the invitation',
        note: `The button signs you in; it works once, for ${lasts}.`,
      };
    case 'sign_up':
      return {
        subject: 'Finish creating your account',
        heading: 'Confirm your email address',
        lead: `Open the link to create the team ${team} and sign in.`,
        action: 'Create my account',
        note: `The button works once, for ${lasts}. If you did not sign up, ignore this message: nothing is created.`,
      };
    default:
      return {
        subject: 'Your sign-in link',
        heading: `Sign in to ${team}`,
        lead: 'Someone, hopefully you, asked to sign in to the dashboard with this address.',
        action: 'Sign in',
        note: `The button works once, for ${lasts}. If you did not ask for it, ignore this message.`,
      };
  }
}

async function findLink(db: Knex, uid: string): Promise<LinkRow | undefined> {
  return db('sign_in_links as l')
    .leftJoin('users as u', 'u.id', 'l.user_id')
    .leftJoin('teams as t', 't.id', 'u.team_id')
    .leftJoin('users as i', 'i.id', 'u.invited_by')
    .where('l.uid', uid)
    .first('l.uid', 'l.purpose', 'l.email', 'l.expires_at', 'l.used_at', 'l.mailed_at', 'l.sign_up', 'u.name as user_name', 't.name as team_name', 'i.name as inviter_name');
}

export type AccountMailOutcome = 'sent' | 'skipped';

/**
 * The notice that the service turned a webhook off (every delivery failing for days), to
 * the team's owners and admins: the people who can mend the endpoint and turn it on again.
 * Not sent when the webhook is on again by then, or was noticed already.
 */
/**
 * A webhook's address as an email shows it: its query left out (receivers put tokens there,
 * and an email's subject is read in notification previews and kept in many places).
 */
function shownAddress(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}${u.search ? '?…' : ''}`;
}

async function sendWebhookNotice(ctx: WorkerContext, transport: MailTransport, from: string, webhookId: number, log: Logger): Promise<AccountMailOutcome> {
  // FOR SHARE waits for the transaction that turned the webhook off and queued this job
  // (it holds the row's lock until it commits): read before that, the webhook looks on.
  const hook = await ctx.db('webhooks as w')
    .join('teams as t', 't.id', 'w.team_id')
    .where('w.id', webhookId)
    .whereNull('w.deleted_at')
    .forShare('w')
    .first('w.uid', 'w.url', 'w.description', 'w.team_id', 'w.is_active', 'w.disabled_reason', 'w.disabled_notified_at', 't.name as team_name');
  if (!hook || hook.is_active || hook.disabled_notified_at) {
    log.info({ webhookId }, 'webhook gone, on again or noticed already: no notice sent');
    return 'skipped';
  }
  const people = await ctx.db('users').where({ team_id: hook.team_id }).whereIn('role', ['owner', 'admin']).orderBy('id').select('email');
  const base = ctx.config.publicBaseUrl;
  const url = `${base}/app/webhooks`;
  const shown = shownAddress(hook.url);
  const named = hook.description ? `${hook.description} (${shown})` : shown;
  const words = {
    subject: `Webhook turned off: ${shown}`.slice(0, 200),
    heading: 'A webhook was turned off',
    lead: `${hook.disabled_reason ?? 'Its deliveries kept failing.'} The webhook to ${named} of ${hook.team_name} gets nothing until it is turned on again; the events since then wait in its deliveries.`,
    action: 'Open the webhooks page',
    note: `Mend the endpoint, send it a test, then turn it on (or PUT /api/webhooks/wh_${hook.uid} with "is_active": true).`,
  };
  const reason = `You received this as an owner or admin of ${hook.team_name} on ${new URL(base).host}.`;
  const html = render(await template(), { ...words, url, reason });
  const text = [words.heading, '', words.lead, '', `${words.action}: ${url}`, '', words.note, '', reason, ''].join('\r\n');
  for (const person of people) await transport.send({ from, to: person.email, subject: words.subject, text, html }, `webhook-off-${hook.uid}-${person.email}`);
  await ctx.db('webhooks').where({ id: webhookId }).update({ disabled_notified_at: ctx.clock.now() });
  log.info({ webhook: hook.uid, recipients: people.length }, 'webhook turned off: team told');
  return 'sent';
}

/** The account-emails queue's worker, run by the mail worker process beside the emails queue. */
export function accountMailWorker(transport: MailTransport, from: string): WorkerDefinition<AccountMailJob, AccountMailOutcome> {
  return {
    contract: accountMailJob,
    concurrency: 2,
    process: async (job, ctx: WorkerContext, log) => {
      if (job.data.webhookId !== undefined) return sendWebhookNotice(ctx, transport, from, job.data.webhookId, log);
      const row = await findLink(ctx.db, job.data.linkUid as string);
      // Queued inside the transaction that makes the row: not visible yet, or rolled back.
      // Tried again (the job's backoff); a link that never appears ends the job for good.
      if (!row) throw new Error('no such sign-in link (yet)');
      const now = ctx.clock.now();
      if (row.used_at || row.mailed_at || new Date(row.expires_at) <= now) {
        log.info({ link: row.uid }, 'sign-in link used, sent or expired: not sent');
        return 'skipped';
      }
      const url = signInUrl(ctx.config.publicBaseUrl, linkToken(ctx.config.appKey, row.uid));
      const words = wording(row, now);
      const reason = `You received this because ${row.email} was given on ${new URL(ctx.config.publicBaseUrl).host}.`;
      const html = render(await template(), { ...words, url, reason });
      const text = [words.heading, '', words.lead, '', `${words.action}: ${url}`, '', words.note, '', reason, ''].join('\r\n');
      await transport.send({ from, to: row.email, subject: words.subject, text, html }, `account-${row.uid}`);
      await ctx.db('sign_in_links').where({ uid: row.uid }).update({ mailed_at: now });
      log.info({ link: row.uid, purpose: row.purpose }, 'sign-in link sent');
      return 'sent';
    },
  };
}
