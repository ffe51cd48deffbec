import { type EventWithCalendar } from '../../../shared/events/event-rows';
import type { Visitor } from '../http/visitor';
import { isbot } from 'isbot';
import type { Knex } from '../../../shared/db/knex';
import type { Clock } from '../../../shared/lifecycle/clock';
import type { Logger } from '../../../shared/logging/logger';
import { BatchedCounter } from '../counters';
import { addCounts, type CountRow, type Metric } from '../../../shared/analytics/counts';

/** What a count keeps of the visitor: whether it is a bot, and for a view where it came from. */
type Who = Pick<Visitor, 'userAgent' | 'referrer' | 'query'>;

/** What a count is about: a calendar, or one of its events. */
interface Target {
  teamId: number;
  calendarId: number;
  eventId?: number;
}

/** How often counts are written. A crash loses at most this long of them; a shutdown writes them. */
const FLUSH_MS = 5000;
/** Referrer hosts and UTM values are cut to this. */
const DIMENSION_CHARS = 100;
/**
 * Distinct referrer and UTM combinations a gateway keeps apart per hour; beyond, new ones
 * count as `(other)`, so made-up query strings cannot grow the table without bound.
 */
const DISTINCT_PER_HOUR = 5000;
const OTHER = '(other)';
const DAY_MS = 86_400_000;
/** User-Agents whose bot test is remembered. */
const KNOWN_AGENTS = 2000;

/** The host of a Referer header, lower case; '' when there is none or it is not a URL. */
function referrerHost(referer: string | undefined): string {
  if (!referer) return '';
  try {
    return new URL(referer).hostname.toLowerCase();
  } catch {
    return '';
  }
}

const dimension = (value: unknown) => (typeof value === 'string' ? value.trim().slice(0, DIMENSION_CHARS) : '');

/**
 * Add-to-calendar analytics, counted without slowing the public paths: a request only adds
 * to a count in memory; the counts are written in one statement every 5 s (and at
 * shutdown). No address, cookie or fingerprint is kept. Bots (by User-Agent) are counted
 * apart. See docs/analytics.md.
 */
export class Analytics {
  private readonly counts: BatchedCounter<string>;
  private readonly seen = new Set<string>();
  private readonly bots = new Map<string, boolean>();
  private dayStart = Number.NEGATIVE_INFINITY;
  private day = '';
  private seenHour = -1;

  constructor(
    db: Knex,
    logger: Logger,
    private readonly clock: Clock,
    private readonly enabled: boolean,
    private readonly ownHost: string,
  ) {
    this.counts = new BatchedCounter<string>((rows) => writeCounts(db, rows), FLUSH_MS, logger);
  }

  /** A page view: its referrer's host and UTM parameters are kept with it. */
  view(visitor: Who, target: Target): void {
    if (!this.enabled) return;
    const host = referrerHost(visitor.referrer);
    const referrer = host === this.ownHost ? '' : dimension(host);
    const q = visitor.query;
    let dims = [referrer, dimension(q.utm_source), dimension(q.utm_medium), dimension(q.utm_campaign)];
    if (dims.some(Boolean)) dims = this.bounded(dims);
    this.add(visitor, target, 'view', '', dims);
  }

  /** An add to a calendar (`platform` as chosen, `auto` resolved), a feed fetch (its platform) or an RSVP (its answer). */
  count(visitor: Who, target: Target, metric: Exclude<Metric, 'view'>, detail: string): void {
    if (!this.enabled) return;
    this.add(visitor, target, metric, detail, ['', '', '', '']);
  }

  flush(): Promise<void> {
    return this.counts.flush();
  }

  private add(visitor: Who, target: Target, metric: Metric, detail: string, dims: string[]): void {
    const day = this.today();
    const bot = this.isBot(visitor.userAgent);
    this.counts.add(JSON.stringify([day, target.teamId, target.calendarId, target.eventId ?? 0, metric, detail, bot, ...dims]));
  }

  /** The UTC day (YYYY-MM-DD) counts go under, made once a day rather than on every request. */
  private today(): string {
    const now = this.clock.now().getTime();
    if (now < this.dayStart || now >= this.dayStart + DAY_MS) {
      this.dayStart = now - (now % DAY_MS);
      this.day = new Date(this.dayStart).toISOString().slice(0, 10);
    }
    return this.day;
  }

  /** isbot's answer, remembered per User-Agent (a few hundred browsers send most requests; its pattern is long). */
  private isBot(userAgent: string): boolean {
    let bot = this.bots.get(userAgent);
    if (bot === undefined) {
      bot = isbot(userAgent);
      if (this.bots.size >= KNOWN_AGENTS) this.bots.clear();
      this.bots.set(userAgent, bot);
    }
    return bot;
  }

  private bounded(dims: string[]): string[] {
    const hour = Math.floor(this.clock.now().getTime() / 3_600_000);
    if (hour !== this.seenHour) {
      this.seen.clear();
      this.seenHour = hour;
    }
    const key = dims.join('\n');
    if (this.seen.has(key)) return dims;
    if (this.seen.size >= DISTINCT_PER_HOUR) return dims.map((d) => (d ? OTHER : d));
    this.seen.add(key);
    return dims;
  }
}

/** The gateway's batch: each key (see Analytics.add) with how many to add. */
function writeCounts(db: Knex, rows: Array<[key: string, by: number]>): Promise<void> {
  const names = ['day', 'team_id', 'calendar_id', 'event_id', 'metric', 'platform', 'bot', 'referrer_host', 'utm_source', 'utm_medium', 'utm_campaign'];
  return addCounts(
    db,
    rows.map(([key, by]) => {
      const values = JSON.parse(key) as unknown[];
      return Object.fromEntries([...names.map((name, i) => [name, values[i]]), ['count', by]]) as CountRow;
    }),
  );
}

const GROUPS = { day: 'day::text', platform: 'platform', referrer: 'referrer_host', utm_source: 'utm_source' } as const;
export type GroupBy = keyof typeof GROUPS;
export const GROUP_BYS = Object.keys(GROUPS) as GroupBy[];

export interface Figures {
  views: number;
  adds: number;
  feed_fetches: number;
  rsvps: number;
  submissions: number;
}

/** The team's counts between two days (inclusive), grouped, for people or for bots. */
export async function readAnalytics(
  db: Knex,
  q: { teamId: number; from: string; to: string; groupBy: GroupBy; calendarId?: number; eventId?: number; bots: boolean },
): Promise<Array<{ key: string } & Figures>> {
  const query = db('analytics_daily')
    .select(
      db.raw(`${GROUPS[q.groupBy]} AS key`),
      db.raw("coalesce(sum(count) FILTER (WHERE metric = 'view'), 0)::int AS views"),
      db.raw("coalesce(sum(count) FILTER (WHERE metric = 'add'), 0)::int AS adds"),
      db.raw("coalesce(sum(count) FILTER (WHERE metric = 'feed_fetch'), 0)::int AS feed_fetches"),
      db.raw("coalesce(sum(count) FILTER (WHERE metric = 'rsvp'), 0)::int AS rsvps"),
      db.raw("coalesce(sum(count) FILTER (WHERE metric = 'submission'), 0)::int AS submissions"),
    )
    .where('team_id', q.teamId)
    .whereBetween('day', [q.from, q.to])
    .where('bot', q.bots)
    .groupByRaw('1')
    .orderByRaw('1');
  if (q.calendarId !== undefined) query.where('calendar_id', q.calendarId);
  if (q.eventId !== undefined) query.where('event_id', q.eventId);
  return query;
}

/** What an event's counts are kept under. */
export const eventTarget = (found: EventWithCalendar): Target => ({ teamId: found.event.team_id, calendarId: found.calendar.id, eventId: found.event.id });

/** An event's figures of all time, people only: views, adds by platform, RSVPs by answer, smart-link submissions by outcome. */
export async function eventStats(db: Knex, teamId: number, eventId: number) {
  const rows: Array<{ metric: Metric; platform: string; n: number }> = await db('analytics_daily')
    .select('metric', 'platform', db.raw('sum(count)::int AS n'))
    .where({ event_id: eventId, team_id: teamId, bot: false })
    .groupBy('metric', 'platform');
  const of = (metric: Metric) => Object.fromEntries(rows.filter((r) => r.metric === metric).map((r) => [r.platform, r.n]));
  return { views: rows.filter((r) => r.metric === 'view').reduce((n, r) => n + r.n, 0), adds: of('add'), rsvps: of('rsvp'), submissions: of('submission') };
}
