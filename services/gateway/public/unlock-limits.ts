import { createHash } from 'node:crypto';
import type { Redis } from '../../../shared/queues/redis';
import { limitAddress } from '../http/client-address';
import { consumePoint, type LimitVerdict, type RateLimiterRes, type SharedLimiter, sharedLimiter } from '../http/rate-limits';

/** Wrong access codes allowed per event and address (an IPv6 address counts as its /64)… */
export const UNLOCK_ATTEMPTS = 5;
/** …in this window. */
export const UNLOCK_WINDOW_SECONDS = 15 * 60;
/**
 * Wrong codes allowed per event from every address together, in the same 15 minutes and in
 * a day, so that many addresses cannot search a short code's whole space between them: 1000
 * a day takes about five days, on average, to find a 4-digit code and years for a 6-character
 * one. Past them nobody can unlock the event until the window ends (signed URLs still open
 * it), and a new code starts the count afresh; a typo now and then never gets near them.
 */
export const UNLOCK_EVENT_ATTEMPTS = 100;
export const UNLOCK_EVENT_DAILY_ATTEMPTS = 1000;
const DAY_SECONDS = 24 * 3600;

interface Window {
  limiter: SharedLimiter;
  points: number;
}

interface Taken {
  window: Window;
  key: string;
  state: RateLimiterRes;
}

/** One attempt at an event's code, counted before the code is checked. */
interface UnlockAttempt {
  /** `over`: a limit is reached, and the code must not be checked at all. */
  verdict: LimitVerdict;
  /** Gives the attempt back to every window that counted it: the code was right. */
  giveBack(): Promise<void>;
}

const verdictOf = (window: Window, state: RateLimiterRes, over: boolean): LimitVerdict => ({
  over,
  limit: window.points,
  remaining: Math.max(0, state.remainingPoints),
  retryAfterSeconds: Math.max(1, Math.ceil(state.msBeforeNext / 1000)),
});

async function giveBack(taken: Taken[]): Promise<void> {
  await Promise.all(taken.map((t) => t.window.limiter.reward(t.key)));
}

/**
 * The brute-force limits of `POST /e/{uid}/unlock`. Each attempt takes its point from every
 * window (atomically, in Redis) before the code is checked, and a right code gives the points
 * back: however many guesses arrive at once, no more are checked than the windows allow.
 * Counting after the check instead let every guess of a burst pass a "fewer than five" read.
 */
export class UnlockLimits {
  private readonly perAddress: Window;
  private readonly perEvent: Window;
  private readonly perEventDaily: Window;

  constructor(redis: Redis, queuePrefix: string) {
    const window = (name: string, points: number, durationSeconds: number): Window => ({
      limiter: sharedLimiter(redis, { keyPrefix: `${queuePrefix}:rl:${name}`, points, durationSeconds }),
      points,
    });
    this.perAddress = window('unlock', UNLOCK_ATTEMPTS, UNLOCK_WINDOW_SECONDS);
    this.perEvent = window('unlock-event', UNLOCK_EVENT_ATTEMPTS, UNLOCK_WINDOW_SECONDS);
    this.perEventDaily = window('unlock-event-day', UNLOCK_EVENT_DAILY_ATTEMPTS, DAY_SECONDS);
  }

  /**
   * Takes one attempt for this address at this event's current code. Refused by one window,
   * it gives back what the windows before took (that guess is never checked). The headers
   * report the window that refused, else the one nearest its end.
   */
  async take(event: { uid: string; access_code_hash: string }, ip: string | undefined): Promise<UnlockAttempt> {
    // Guesses at a code that has since changed say nothing about the new one.
    const code = createHash('sha256').update(event.access_code_hash).digest('base64url').slice(0, 16);
    const steps = [
      { window: this.perAddress, key: `${event.uid}:${limitAddress(ip)}` },
      { window: this.perEvent, key: `${event.uid}:${code}` },
      { window: this.perEventDaily, key: `${event.uid}:${code}` },
    ];
    const taken: Taken[] = [];
    for (const step of steps) {
      let counted: Awaited<ReturnType<typeof consumePoint>>;
      try {
        counted = await consumePoint(step.window.limiter, step.key);
      } catch (err) {
        await giveBack(taken);
        throw err;
      }
      if (counted.over) {
        await giveBack(taken);
        return { verdict: verdictOf(step.window, counted.state, true), giveBack: async () => undefined };
      }
      taken.push({ ...step, state: counted.state });
    }
    const nearest = taken.reduce((a, b) => (b.state.remainingPoints < a.state.remainingPoints ? b : a));
    return { verdict: verdictOf(nearest.window, nearest.state, false), giveBack: () => giveBack(taken) };
  }
}
