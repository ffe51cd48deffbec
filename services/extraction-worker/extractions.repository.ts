import type { Knex } from '../../shared/db/knex';
import { EXTRACTION_COLUMNS, type ExtractionRow, toExtractionJson } from '../../shared/extractions/extraction-json';
import { recordWebhookEvent } from '../../shared/webhooks/outbox';
import type { ExtractionResult } from './extractor/extractor';

interface PendingExtractionRow {
  id: number;
  uid: string;
  status: 'pending' | 'completed' | 'failed';
  text: string;
  timezone: string;
  reference_date: string;
}

export type Outcome = { status: 'completed'; result: ExtractionResult } | { status: 'failed'; error: string };

export async function findExtraction(db: Knex, uid: string): Promise<PendingExtractionRow | undefined> {
  return db('extractions').first('id', 'uid', 'status', 'text', 'timezone', 'reference_date').where({ uid });
}

/**
 * Finishes a pending extraction. Only a pending row is written, so a duplicate delivery
 * (or a second worker racing the first) never overwrites the answer already given.
 * Returns false when the row was finished already.
 */
export async function finishExtraction(db: Knex, id: number, outcome: Outcome): Promise<boolean> {
  return db.transaction(async (trx) => {
    const [row] = (await trx('extractions')
      .where({ id, status: 'pending' })
      .update({
        status: outcome.status,
        result: outcome.status === 'completed' ? JSON.stringify(outcome.result) : null,
        error: outcome.status === 'failed' ? outcome.error : null,
        completed_at: trx.fn.now(),
      })
      .returning(EXTRACTION_COLUMNS)) as ExtractionRow[];
    if (!row) return false;
    // The team's webhooks hear of it in the same transaction (see shared/webhooks/outbox.ts).
    await recordWebhookEvent(trx, {
      teamId: row.team_id,
      type: row.status === 'completed' ? 'extraction.completed' : 'extraction.failed',
      resource: `extraction:${row.uid}`,
      data: toExtractionJson(row),
      at: new Date(),
    });
    return true;
  });
}
