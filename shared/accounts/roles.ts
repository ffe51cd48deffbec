/**
 * A user's role in their team. member: calendars, events, RSVPs, approvals, subscribers;
 * admin: also smart links, webhooks, API tokens and members; owner: everything, including
 * making and removing owners. A token acts with its user's role.
 */
export const ROLES = ['member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** Whether `role` may do what needs `needed`. */
export const atLeast = (role: Role, needed: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(needed);
