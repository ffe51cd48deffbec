import { pgTimestampToIsoMicrosOrNull } from '../calendar/dates';

/** A recorded smart-link submission. */
export interface SubmissionRow {
  uid: string;
  smart_link_id: number;
  team_id: number;
  status: 'processed' | 'duplicate' | 'failed';
  event_uid: string | null;
  error: string | null;
  received_at: string;
  processed_at: string;
}


/** A recorded submission as the API shows it, and as webhooks are told of it. */
export function toSubmissionJson(row: SubmissionRow) {
  return {
    id: `sls_${row.uid}`,
    status: row.status,
    event_public_id: row.event_uid ? `evt_${row.event_uid}` : null,
    error: row.error,
    received_at: pgTimestampToIsoMicrosOrNull(row.received_at),
    processed_at: pgTimestampToIsoMicrosOrNull(row.processed_at),
  };
}
