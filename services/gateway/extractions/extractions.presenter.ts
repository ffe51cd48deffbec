import { pgTimestampToIsoMicros } from '../../../shared/calendar/dates';
import { publicId } from '../../../shared/ids/ids';
import type { ExtractionRow } from './extractions.repository';

// The create body's order (jsonb keeps its own key order, shortest first).
const RESULT_FIELDS = ['title', 'description', 'location', 'date_start', 'date_end', 'timezone', 'is_all_day', 'recurrence_rule'] as const;

/** docs/extraction.md: `{id, status, result, error, created_at, completed_at}`. */
export function toExtractionJson(row: ExtractionRow) {
  const result = row.result;
  return {
    id: publicId('ext_', row.uid),
    status: row.status,
    result: result ? Object.fromEntries(RESULT_FIELDS.map((f) => [f, result[f] ?? null])) : null,
    error: row.error,
    created_at: pgTimestampToIsoMicros(row.created_at),
    completed_at: row.completed_at ? pgTimestampToIsoMicros(row.completed_at) : null,
  };
}
