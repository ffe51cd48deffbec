import type { TokenRow } from './team.repository';

const iso = (v: string | Date | null) => (v === null ? null : new Date(v).toISOString());

/** A token as the API shows it (never its secret, which only its creation answers). */
export const toTokenJson = (t: TokenRow) => ({
  id: `tok_${t.uid}`,
  kind: t.kind,
  name: t.name,
  user: { id: `usr_${t.user_uid}`, name: t.user_name },
  created_at: iso(t.created_at),
  last_used_at: iso(t.last_used_at),
});
