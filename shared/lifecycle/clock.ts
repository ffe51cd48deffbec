/** The time source; tests inject a fixed or movable clock (signed-URL expiry, months). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
