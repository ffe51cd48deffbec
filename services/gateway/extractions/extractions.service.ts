import { LAST_INSTANT_MS, parseDateInput, resolveInstant } from '../../../shared/calendar/dates';
import { notFound, validationFailed } from '../../../shared/errors/app-error';
import { newUid, publicId, uidFromPublicId } from '../../../shared/ids/ids';
import { extractionJob } from '../../../shared/queues/extraction.job';
import { oldestCalendar } from '../calendars/calendars.repository';
import type { AppContext } from '../context';
import type { AuthContext } from '../http/auth';
import type { ExtractionWaiter } from './extraction-waiter';
import type { ExtractInput } from './extractions.schemas';
import type { ExtractionRow } from '../../../shared/extractions/extraction-json';
import { deleteExtraction, findTeamExtraction, insertExtraction } from './extractions.repository';

/*
 * Extraction requests never create an event and never touch the monthly event counter:
 * they count against the plan's request rate limit (the API-wide limiter), like any call.
 */

type ExtractionsDeps = Pick<AppContext, 'db' | 'queues' | 'logger' | 'clock'>;

/** Without a timezone, the text is read in the zone of the team's oldest calendar, else UTC. */
async function zoneFor(deps: ExtractionsDeps, teamId: number, requested: string | undefined): Promise<string> {
  if (requested) return requested;
  return (await oldestCalendar(deps.db, teamId))?.timezone ?? 'UTC';
}

/**
 * Stores a pending extraction, then queues its job. When the queue cannot take the job
 * the row is removed again and the 503 goes to the client: nothing is left half-done.
 */
export async function requestExtraction(deps: ExtractionsDeps, auth: AuthContext, input: ExtractInput, requestId: string): Promise<ExtractionRow> {
  const timezone = await zoneFor(deps, auth.teamId, input.timezone);
  const parsed = input.reference_date ? parseDateInput(input.reference_date) : null;
  const reference = parsed ? resolveInstant(parsed, timezone) : null;
  if (reference && reference.toMillis() > LAST_INSTANT_MS) {
    throw validationFailed({ reference_date: ['The reference date field must be a date before the year 10000.'] });
  }
  const row = await insertExtraction(deps.db, {
    uid: newUid(),
    team_id: auth.teamId,
    user_id: auth.userId,
    text: input.text,
    timezone,
    // "tomorrow" counts from when the text was written: as the request says, else now.
    reference_date: reference ? (reference.toUTC().toISO() as string) : deps.clock.now().toISOString(),
  });
  const id = publicId('ext_', row.uid);
  try {
    await deps.queues.producer(extractionJob).add('extract', { extractionId: id, meta: { requestId } }, { jobId: id });
  } catch (err) {
    // The client hears why the request failed (503), not whether this clean-up did.
    await deleteExtraction(deps.db, row.id).catch((cleanup: Error) =>
      deps.logger.error({ err: cleanup.message, extraction: id }, 'could not remove an extraction whose job was not queued'),
    );
    throw err;
  }
  return row;
}

export async function readExtraction(deps: Pick<AppContext, 'db'>, teamId: number, id: string): Promise<ExtractionRow> {
  const uid = uidFromPublicId('ext_', id);
  const row = uid ? await findTeamExtraction(deps.db, teamId, uid) : undefined;
  if (!row) throw notFound('Extraction');
  return row;
}

/** The finished extraction if it finishes within `seconds`, else null. */
export async function awaitExtraction(deps: Pick<AppContext, 'db'>, waiter: ExtractionWaiter, row: ExtractionRow, seconds: number): Promise<ExtractionRow | null> {
  if (seconds <= 0) return null;
  return waiter.wait(publicId('ext_', row.uid), seconds * 1000, async () => {
    const now = await findTeamExtraction(deps.db, row.team_id, row.uid);
    return now && now.status !== 'pending' ? now : null;
  });
}
