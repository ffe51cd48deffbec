import { pgTimestampToIsoMicros } from '../../../shared/calendar/dates';
import { publicId } from '../../../shared/ids/ids';
import type { ExtractionRow } from './extractions.repository';

/** API.md "Extraction": `{id, status, result, error, created_at, completed_at}`. */
export function toExtractionJson(row: ExtractionRow) {
  return {
    id: publicId('ext_', row.uid),
    status: row.status,
    result: row.result,
    error: row.error,
    created_at: pgTimestampToIsoMicros(row.created_at),
    completed_at: row.completed_at ? pgTimestampToIsoMicros(row.completed_at) : null,
  };
}
