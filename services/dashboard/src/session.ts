import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role, Session } from './api/types';

interface SessionState {
  session: Session;
  /** Loads the session again (after a role or name change). */
  refresh: () => void;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside a signed-in screen');
  return state;
}

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

/**
 * What a role may do, as the server decides it: members work with events, calendars, RSVPs,
 * approvals and subscribers; admins also with smart links, webhooks, tokens and members;
 * owners with everything. The dashboard hides what a role cannot do; the server still checks.
 */
export const atLeast = (role: Role, needed: Role) => RANK[role] >= RANK[needed];

/** Whether the signed-in person may change what a screen shows (the server checks it again). */
export const useCanManage = (): boolean => atLeast(useSession().session.user.role, 'admin');
