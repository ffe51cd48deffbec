import type { Paths } from './paths';

type Json<R> = R extends { content: { 'application/json': infer T } } ? T : never;
/** The JSON body of a path's method's success answer. */
type Ok<P extends keyof Paths, M extends keyof Paths[P]> = Paths[P][M] extends { responses: infer R } ? Json<R[(200 | 201 | 202) & keyof R]> : never;
/** The JSON body a path's method takes. */
export type Body<P extends keyof Paths, M extends keyof Paths[P]> = Paths[P][M] extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;

export type Session = Ok<'/api/session', 'get'>['data'];
export type Role = Session['user']['role'];
export type AuthOptions = Ok<'/api/auth/options', 'get'>['data'];
export type Account = Ok<'/api/account', 'get'>['data'];
export type Calendar = Ok<'/api/calendars', 'get'>['data'][number];
export type CalendarInput = Body<'/api/calendars', 'post'>;
export type EventItem = Ok<'/api/events', 'get'>['data'][number];
export type EventFull = Ok<'/api/calendars/{cal}/events/{evt}', 'get'>;
export type EventInput = Body<'/api/calendars/{cal}/events', 'post'>;
export type EventFilters = NonNullable<Paths['/api/events']['get']['parameters']['query']>;
export type Extraction = Ok<'/api/events/extract/{ext}', 'get'>['data'];
export type Rsvp = Ok<'/api/calendars/{cal}/events/{evt}/rsvps', 'get'>['data'][number];
export type Invitee = Ok<'/api/calendars/{cal}/events/{evt}/invites', 'get'>['data'][number];
export type AnalyticsRow = Ok<'/api/analytics', 'get'>['data'][number];
export type SmartLink = Ok<'/api/smart-links', 'get'>['data'][number];
export type Submission = Ok<'/api/smart-links/{sl}/submissions', 'get'>['data'][number];
export type Subscriber = Ok<'/api/calendars/{cal}/subscribers', 'get'>['data'][number];
export type Webhook = Ok<'/api/webhooks', 'get'>['data'][number];
export type WebhookEventType = NonNullable<Body<'/api/webhooks', 'post'>['event_types']>[number];
export type Delivery = Ok<'/api/webhooks/{wh}/deliveries', 'get'>['data'][number];
export type Token = Ok<'/api/tokens', 'get'>['data'][number];
export type Member = Ok<'/api/members', 'get'>['data'][number];
