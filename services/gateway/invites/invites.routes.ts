import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { errors, mailQuota429 } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { toInviteeJson } from '../../../shared/invites/invitee-json';
import {
  addedInviteesSchema,
  addInviteesBody,
  type AddInviteesInput,
  eventInvitesParams,
  inviteeListSchema,
  inviteParams,
  listInvitesQuery,
  type ListInvitesQuery,
  removedInviteeSchema,
} from './invites.schemas';
import { addInvitees, listEventInvitees, removeInvitee } from './invites.service';

type CalEvtParams = { cal: string; evt: string };
type InvParams = CalEvtParams & { inv: string };

export function inviteRoutes(deps: AppContext): RouteSpec[] {
  const tags = ['Invites'];
  const target = (params: CalEvtParams, req: Parameters<typeof authOf>[0]) => ({
    teamId: authOf(req).teamId,
    calPublicId: params.cal,
    evtPublicId: params.evt,
  });

  return [
    defineRoute<CalEvtParams, Record<string, never>, AddInviteesInput>({
      method: 'post',
      path: '/api/calendars/:cal/events/:evt/invites',
      operationId: 'addInvitees',
      summary: 'Invite people to an event',
      description:
        '1–500 invitees per call, deduplicated by email (case-insensitive). Each new invitee is queued an invitation email with the event as an iTIP REQUEST; people already invited are left as they are. Sets `has_calendar_invites`. A draft is a 409 (publish it first), as is a pending or rejected event (approve it first): the invitation links to the event page, which those do not have. Every bad entry is reported (`invitees.N.email`) and nothing is stored.',
      tags,
      auth: true,
      params: eventInvitesParams,
      body: addInviteesBody,
      responses: { 200: { description: 'The named invitees, with their last delivery', body: addedInviteesSchema }, ...errors(400, 401, 404, 409, 413, 415, 422, 503), 429: mailQuota429 },
      handler: async ({ params, body }, req) => {
        const result = await addInvitees(deps, target(params, req), body.invitees, req.id);
        return ok({ data: result.invitees.map(toInviteeJson), meta: { added: result.added, already_invited: result.alreadyInvited } });
      },
    }),
    defineRoute<CalEvtParams, ListInvitesQuery>({
      method: 'get',
      path: '/api/calendars/:cal/events/:evt/invites',
      operationId: 'listInvitees',
      summary: "List an event's invitees",
      description: 'In the order they were added, each with its last delivery. Pages by keyset: pass `meta.next_cursor` as `cursor`.',
      tags,
      auth: true,
      params: eventInvitesParams,
      query: listInvitesQuery,
      responses: { 200: { description: 'A page of invitees', body: inviteeListSchema }, ...errors(401, 404, 422, 503) },
      handler: async ({ params, query }, req) => {
        const page = await listEventInvitees(deps, target(params, req), query);
        return ok({ data: page.rows.map(toInviteeJson), meta: { per_page: query.per_page, next_cursor: page.nextCursor } });
      },
    }),
    defineRoute<InvParams>({
      method: 'delete',
      path: '/api/calendars/:cal/events/:evt/invites/:inv',
      operationId: 'removeInvitee',
      summary: 'Remove an invitee',
      description: 'Queues that person a cancellation for themselves (METHOD:CANCEL without STATUS:CANCELLED, a higher SEQUENCE; kind `removal`) so the event leaves their calendar; the event goes on.',
      tags,
      auth: true,
      params: inviteParams,
      responses: { 200: { description: 'Removed', body: removedInviteeSchema }, ...errors(401, 404, 503), 429: mailQuota429 },
      handler: async ({ params }, req) => {
        const result = await removeInvitee(deps, target(params, req), params.inv, req.id);
        return ok({ data: { id: result.publicId, deleted: true, cancellation_queued: result.queued } });
      },
    }),
  ];
}
