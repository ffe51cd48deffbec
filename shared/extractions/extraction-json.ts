import { pgTimestampToIsoMicros, pgTimestampToIsoMicrosOrNull } from '../calendar/dates';
import { publicId } from '../ids/ids';

/** An extraction as stored. */
export interface ExtractionRow {
  id: number;
  uid: string;
  team_id: number;
  status: 'pending' | 'completed' | 'failed';
  result: Record<string, unknown> | null;
  error: string | null;
  created_at: string;
  completed_at: string | null;
}

export const EXTRACTION_COLUMNS = ['id', 'uid', 'team_id', 'status', 'result', 'error', 'created_at', 'completed_at'] as const;

// The create body's order (jsonb keeps its own key order, shortest first).
const RESULT_FIELDS = ['title', 'description', 'location', 'date_start', 'date_end', 'timezone', 'is_all_day', 'recurrence_rule'] as const;

/**
 * An extraction as the API shows it (docs/extraction.md: `{id, status, result, error,
 * created_at, completed_at}`), and as webhooks are told of it.
 */
export function toExtractionJson(row: ExtractionRow) {
  const result = row.result;
  return {
    id: publicId('ext_', row.uid),
    status: row.status,
    result: result ? Object.fromEntries(RESULT_FIELDS.map((f) => [f, result[f] ?? null])) : null,
    error: row.error,
    created_at: pgTimestampToIsoMicros(row.created_at),
    completed_at: pgTimestampToIsoMicrosOrNull(row.completed_at),
  };
}
