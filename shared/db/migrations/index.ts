import type { Knex } from 'knex';
import * as core from './0001_core';
import * as takeEventSlots from './0002_take_event_slots';
import * as dynamicLinks from './0003_dynamic_links';
import * as extractions from './0004_extractions';
import * as invites from './0005_invites';
import * as smartLinks from './0006_smart_links';
import * as rsvpsSubscribers from './0007_rsvps_subscribers';
import * as rsvpConfirmations from './0008_rsvp_confirmations';
import * as planRateLimits from './0009_plan_rate_limits';
import * as submissionsByReceipt from './0010_submissions_by_receipt';
import * as unlimitedUsage from './0011_unlimited_usage';
import * as subscriberFeedTokenHash from './0012_subscriber_feed_token_hash';
import * as rsvpDeclines from './0013_rsvp_declines';
import * as guestRemovals from './0014_guest_removals';
import * as submissionRetention from './0015_submission_retention';
import * as extractionRetention from './0016_extraction_retention';
import * as feedRemovals from './0017_feed_removals';
import * as shortLinkRetirement from './0018_short_link_retirement';
import * as rsvpLinks from './0019_rsvp_links';
import * as deliveryRetention from './0020_delivery_retention';
import * as searchStatistics from './0021_search_statistics';
import * as deploymentIdentity from './0022_deployment_identity';
import * as tokenIds from './0023_token_ids';
import * as searchIndex from './0024_search_index';
import * as mailQuotas from './0025_mail_quotas';
import * as feedWindow from './0026_feed_window';
import * as webhooks from './0027_webhooks';
import * as analytics from './0028_analytics';
import * as calendarOrganizer from './0029_calendar_organizer';
import * as mailSuppressions from './0030_mail_suppressions';
import * as inviteeResponses from './0031_invitee_responses';
import * as emailReminders from './0032_email_reminders';
import * as calendarLocale from './0033_calendar_locale';
import * as dashboardAccounts from './0034_dashboard_accounts';
import * as webhookDisabledNotice from './0035_webhook_disabled_notice';
import * as teamDeletion from './0036_team_deletion';
import * as webhookDueIndex from './0037_webhook_due_index';
import * as webhookMessageBody from './0038_webhook_message_body';
import * as submissionAnalytics from './0039_submission_analytics';
import * as calendarTeamStatistics from './0040_calendar_team_statistics';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
  /** `transaction: false`: run outside a transaction (CREATE INDEX CONCURRENTLY); the whole batch then runs migration by migration. */
  config?: { transaction?: boolean };
}

/**
 * Migrations in order. Listed here instead of globbed from disk so they run the same
 * from TypeScript (tests) and from compiled JavaScript (dist), and a stray file never runs.
 * Add a new migration at the end; never rename or edit one that has shipped.
 */
export const migrations: Array<[name: string, migration: Migration]> = [
  ['0001_core', core],
  ['0002_take_event_slots', takeEventSlots],
  ['0003_dynamic_links', dynamicLinks],
  ['0004_extractions', extractions],
  ['0005_invites', invites],
  ['0006_smart_links', smartLinks],
  ['0007_rsvps_subscribers', rsvpsSubscribers],
  ['0008_rsvp_confirmations', rsvpConfirmations],
  ['0009_plan_rate_limits', planRateLimits],
  ['0010_submissions_by_receipt', submissionsByReceipt],
  ['0011_unlimited_usage', unlimitedUsage],
  ['0012_subscriber_feed_token_hash', subscriberFeedTokenHash],
  ['0013_rsvp_declines', rsvpDeclines],
  ['0014_guest_removals', guestRemovals],
  ['0015_submission_retention', submissionRetention],
  ['0016_extraction_retention', extractionRetention],
  ['0017_feed_removals', feedRemovals],
  ['0018_short_link_retirement', shortLinkRetirement],
  ['0019_rsvp_links', rsvpLinks],
  ['0020_delivery_retention', deliveryRetention],
  ['0021_search_statistics', searchStatistics],
  ['0022_deployment_identity', deploymentIdentity],
  ['0023_token_ids', tokenIds],
  ['0024_search_index', searchIndex],
  ['0025_mail_quotas', mailQuotas],
  ['0026_feed_window', feedWindow],
  ['0027_webhooks', webhooks],
  ['0028_analytics', analytics],
  ['0029_calendar_organizer', calendarOrganizer],
  ['0030_mail_suppressions', mailSuppressions],
  ['0031_invitee_responses', inviteeResponses],
  ['0032_email_reminders', emailReminders],
  ['0033_calendar_locale', calendarLocale],
  ['0034_dashboard_accounts', dashboardAccounts],
  ['0035_webhook_disabled_notice', webhookDisabledNotice],
  ['0036_team_deletion', teamDeletion],
  ['0037_webhook_due_index', webhookDueIndex],
  ['0038_webhook_message_body', webhookMessageBody],
  ['0039_submission_analytics', submissionAnalytics],
  ['0040_calendar_team_statistics', calendarTeamStatistics],
];
