import type { SessionView } from './sessions.service';

/** A session as the API shows it: who, which team, the CSRF token of a browser session, and its end. */
export const toSessionJson = ({ user, team, expiresAt }: SessionView, csrfToken: string | null) => ({
  user: { id: `usr_${user.uid}`, name: user.name, email: user.email, role: user.role, has_password: Boolean(user.has_password) },
  team: { id: `team_${team.uid}`, name: team.name },
  csrf_token: csrfToken,
  expires_at: expiresAt ? expiresAt.toISOString() : null,
});
