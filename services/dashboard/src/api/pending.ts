/**
 * The session, sign-in, token and member routes as their contract says, for as long as the
 * gateway's OpenAPI document does not declare them yet. paths.ts lets the generated types win
 * for every path the document has, so once the routes exist this file is dead and is removed.
 */
interface ErrorBody {
  message: string;
  errors?: Record<string, string[]>;
}
type Res<T> = { headers: { [name: string]: unknown }; content: { 'application/json': T } };
type Errors = { 401: Res<ErrorBody>; 403: Res<ErrorBody>; 404: Res<ErrorBody>; 409: Res<ErrorBody>; 422: Res<ErrorBody>; 429: Res<ErrorBody> };
type NoParams = { query?: never; header?: never; path?: never; cookie?: never };
type PathParams<P> = { query?: never; header?: never; path: P; cookie?: never };
type Op<B, Status extends number, T, P = undefined> = {
  parameters: P extends undefined ? NoParams : PathParams<P>;
  responses: { [K in Status]: Res<T> } & Errors;
} & (B extends undefined ? { requestBody?: never } : { requestBody: { content: { 'application/json': B } } });
type Item<Ops> = { parameters: NoParams } & Ops;

type Role = 'owner' | 'admin' | 'member';
interface Session {
  user: { id: string; name: string; email: string; role: Role; has_password: boolean };
  team: { id: string; name: string };
  csrf_token: string | null;
  expires_at: string | null;
}
interface Token {
  id: string;
  kind: 'api' | 'extension';
  name: string;
  user: { id: string; name: string };
  created_at: string;
  last_used_at: string | null;
}
interface Member {
  id: string;
  name: string;
  email: string;
  role: Role;
  status: 'active' | 'invited';
  created_at: string;
  last_sign_in_at: string | null;
}

export interface PendingPaths {
  '/api/auth/options': Item<{ get: Op<undefined, 200, { data: { signup: 'open' | 'invite' | 'closed'; password_sign_in: boolean } }> }>;
  '/api/auth/sign-in-link': Item<{ post: Op<{ email: string }, 202, { data: { sent: boolean } }> }>;
  '/api/auth/sign-up': Item<{ post: Op<{ email: string; name: string; team_name: string }, 202, { data: { sent: boolean } }> }>;
  '/api/auth/sessions': Item<{ post: Op<{ token: string } | { email: string; password: string }, 201, { data: Session }> }>;
  '/api/session': Item<{ get: Op<undefined, 200, { data: Session }>; delete: Op<undefined, 200, { data: { signed_out: boolean } }> }>;
  '/api/session/revoke-all': Item<{ post: Op<undefined, 200, { data: { revoked: number } }> }>;
  '/api/account/password': Item<{ put: Op<{ password: string; current_password?: string }, 200, { data: unknown }> }>;
  '/api/tokens': Item<{ get: Op<undefined, 200, { data: Token[] }>; post: Op<{ name: string }, 201, { data: Token & { token: string } }> }>;
  '/api/tokens/{tok}': Item<{ delete: Op<undefined, 200, { data: { id: string; deleted: boolean } }, { tok: string }> }>;
  '/api/members': Item<{ get: Op<undefined, 200, { data: Member[] }>; post: Op<{ email: string; name?: string; role: Role }, 201, { data: Member }> }>;
  '/api/members/{usr}': Item<{
    put: Op<{ role: Role }, 200, { data: Member }, { usr: string }>;
    delete: Op<undefined, 200, { data: { id: string; deleted: boolean } }, { usr: string }>;
  }>;
}
