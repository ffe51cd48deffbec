import { randomBytes } from 'node:crypto';
import { createDb, type Knex } from '../../shared/db/knex';
import { AppError } from '../../shared/errors/app-error';
import { addUsage, eventLimitErrorFrom, periodOf, reserveEventSlots, usageKey, usageSnapshot } from '../../shared/usage/event-limit';

let db: Knex;
beforeAll(() => {
  // Set by the jest global setup (npm test) or by test/mutation/run.js (npm run test:mutation).
  if (!process.env.TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is unset: run these tests through npm test or npm run test:mutation');
  db = createDb(process.env.TEST_DATABASE_URL, { poolMax: 2 });
});
afterAll(() => db.destroy());

async function team(plan: string, override: number | null = null): Promise<number> {
  const [row] = await db('teams')
    .insert({ uid: randomBytes(8).toString('hex'), name: 'T', plan_id: plan, event_limit_override: override })
    .returning('id');
  return Number(row.id);
}

const MAY = new Date('2026-05-31T23:59:59.999Z');
const JUNE = new Date('2026-06-01T00:00:00Z');

describe('periods and keys', () => {
  it('is the UTC month of the instant', () => {
    expect(periodOf(MAY)).toBe('2026-05');
    expect(periodOf(JUNE)).toBe('2026-06');
    expect(usageKey(12, '2026-05')).toBe('12/2026-05');
  });
});

describe('reserveEventSlots', () => {
  it('grants up to the allowance and reports the count after it', async () => {
    const id = await team('free', 3);
    expect(await reserveEventSlots(db, id, 2, MAY)).toEqual({ granted: 2, current: 2, limit: 3 });
    expect(await reserveEventSlots(db, id, 2, MAY)).toEqual({ granted: 1, current: 3, limit: 3 });
    expect(await reserveEventSlots(db, id, 1, MAY)).toEqual({ granted: 0, current: 3, limit: 3 });
    expect(await reserveEventSlots(db, id, 1, JUNE)).toEqual({ granted: 1, current: 1, limit: 3 });
  });

  it('grants everything without a limit', async () => {
    const id = await team('unlimited');
    expect(await reserveEventSlots(db, id, 500, MAY)).toEqual({ granted: 500, current: 500, limit: null });
  });
});

describe('addUsage and usageSnapshot', () => {
  it('adds each team and period of a batch, on top of what is there', async () => {
    const a = await team('free');
    const b = await team('unlimited');
    await addUsage(db, [
      [usageKey(a, '2026-05'), 3],
      [usageKey(b, '2026-05'), 7],
      [usageKey(a, '2026-06'), 1],
    ]);
    await addUsage(db, [[usageKey(a, '2026-05'), 2]]);
    expect(await usageSnapshot(db, a, MAY)).toEqual({ current: 5, limit: 50, remaining: 45, is_unlimited: false });
    expect(await usageSnapshot(db, a, JUNE)).toEqual({ current: 1, limit: 50, remaining: 49, is_unlimited: false });
    expect(await usageSnapshot(db, b, MAY)).toEqual({ current: 7, limit: null, remaining: null, is_unlimited: true });
  });

  it('reads the override over the plan, zero for a period without usage, never a negative remainder', async () => {
    const id = await team('pro', 2);
    expect(await usageSnapshot(db, id, MAY)).toEqual({ current: 0, limit: 2, remaining: 2, is_unlimited: false });
    await addUsage(db, [[usageKey(id, '2026-05'), 5]]);
    expect(await usageSnapshot(db, id, MAY)).toEqual({ current: 5, limit: 2, remaining: 0, is_unlimited: false });
    expect(await usageSnapshot(db, await team('pro'), MAY)).toMatchObject({ limit: 1000, remaining: 1000 });
  });

  it('says unlimited for a team that does not exist', async () => {
    expect(await usageSnapshot(db, 999_999_999, MAY)).toEqual({ current: 0, limit: null, remaining: null, is_unlimited: true });
  });
});

describe('eventLimitErrorFrom', () => {
  const failure = (detail: object, over: object = {}) => ({ code: 'P0001', message: 'event_limit_exceeded', detail: JSON.stringify(detail), ...over });

  it('is the 409 with the figures of the detail', () => {
    const err = eventLimitErrorFrom(failure({ current: 48, limit: 50 }), 5) as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect(err.status).toBe(409);
    expect(err.code).toBe('event_limit_exceeded');
    expect(err.message).toBe('You have reached the event limit of your plan for this month.');
    expect(err.body).toEqual({ current: 48, limit: 50, remaining: 2, would_exceed_by: 3, is_unlimited: false, limit_type: 'monthly' });
  });

  it('wants one event by default, and never says a negative remainder', () => {
    expect((eventLimitErrorFrom(failure({ current: 50, limit: 50 })) as AppError).body).toMatchObject({ remaining: 0, would_exceed_by: 1 });
    expect((eventLimitErrorFrom(failure({ current: 60, limit: 50 })) as AppError).body).toMatchObject({ remaining: 0, would_exceed_by: 11 });
  });

  it('is null for any other error', () => {
    expect(eventLimitErrorFrom(failure({ current: 1, limit: 1 }, { code: 'P0002' }))).toBeNull();
    expect(eventLimitErrorFrom(failure({ current: 1, limit: 1 }, { message: 'other' }))).toBeNull();
    expect(eventLimitErrorFrom(failure({ current: 1, limit: 1 }, { message: undefined }))).toBeNull();
    expect(eventLimitErrorFrom(failure({ current: 1, limit: 1 }, { detail: '' }))).toBeNull();
    expect(eventLimitErrorFrom(undefined)).toBeNull();
    expect(eventLimitErrorFrom(new Error('event_limit_exceeded'))).toBeNull();
  });
});
