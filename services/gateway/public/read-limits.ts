import type { Request, Response } from 'express';
import type { Redis } from '../../../shared/queues/redis';
import { limitAddress } from '../http/client-address';
import { PlanRateLimits, verdictHeaders } from '../http/rate-limits';
import { messagePage } from './views';
import { tooManyRequests } from '../../../shared/errors/app-error';

/**
 * The anonymous reads of a calendar's public surface that cost the most to answer: its page
 * (a list query), its feed (every event, a body of megabytes) and its events' .ics files.
 * Each read counts, per minute, against the client's address across every calendar
 * (`PUBLIC_READ_RATE_PER_MINUTE`) and against the calendar from every address together
 * (`PUBLIC_CALENDAR_READ_RATE_PER_MINUTE`), in Redis like every limit. Personal feeds, event
 * pages and platform redirects are not counted.
 */
export class PublicReadLimits {
  private readonly windows: PlanRateLimits;

  constructor(
    redis: Redis,
    queuePrefix: string,
    private readonly perAddress: number,
    private readonly perCalendar: number,
  ) {
    this.windows = new PlanRateLimits(redis, queuePrefix);
  }

  /**
   * Counts one read of the calendar (`calendarUid`; null: of nothing that exists, counted
   * against the address alone) and sets the X-RateLimit headers. Over a limit it throws the
   * 429 (`Retry-After` is set; a page for browsers, `{"message"}` for JSON).
   */
  async take(req: Request, res: Response, calendarUid: string | null): Promise<void> {
    const checks = [{ scope: 'public-read', key: limitAddress(req.ip), perMinute: this.perAddress }];
    if (calendarUid !== null) checks.push({ scope: 'public-calendar-read', key: calendarUid, perMinute: this.perCalendar });
    const verdict = await this.windows.take(checks);
    if (!verdict) return;
    verdictHeaders(res, verdict);
    if (verdict.over) throw tooManyRequests().withPage((locale) => messagePage(locale, 'too_many_title', 'too_many_text'));
  }
}
