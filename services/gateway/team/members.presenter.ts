import type { MemberRow } from './team.repository';

/** A member as the API shows it: `invited` until their first sign-in. */
export const toMember = (m: MemberRow) => ({
  id: `usr_${m.uid}`,
  name: m.name,
  email: m.email,
  role: m.role,
  status: m.invited_by !== null && m.last_sign_in_at === null ? 'invited' : 'active',
  created_at: new Date(m.created_at).toISOString(),
  last_sign_in_at: m.last_sign_in_at ? new Date(m.last_sign_in_at).toISOString() : null,
});
