import { type NextFunction, type Request, type RequestHandler, type Response, Router } from 'express';
import type Joi from 'joi';
import type { FieldErrors } from '../../../shared/errors/app-error';
import type { Role } from '../../../shared/accounts/roles';
import { type AuthContext, requireRole } from './auth';
import type { LimitCheck } from './rate-limits';
import { throwIfErrors, validatePart } from './validation';

/**
 * One declaration per endpoint: Express mounts it, joi validates it, and the OpenAPI
 * document is generated from it, so the docs cannot drift from what is enforced.
 */
type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  /** JSON body shape; omitted for bodies that are not JSON. */
  body?: Joi.Schema;
  /** Content type(s) when the body is not JSON (text/html, text/calendar…); with `body` too, either is answered. */
  contentType?: string | string[];
}

interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const ok = (body: unknown, headers?: Record<string, string>): Reply => ({ status: 200, body, headers });
export const accepted = (body: unknown, headers?: Record<string, string>): Reply => ({ status: 202, body, headers });

export interface RouteSpec<P = Record<string, string>, Q = Record<string, unknown>, B = Record<string, unknown>> {
  method: HttpMethod;
  /** Express path, e.g. `/api/calendars/:cal/events`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** A bearer token or a dashboard session required. */
  auth: boolean;
  /** The least role the caller needs in their team (default: member, any signed-in user). */
  role?: Role;
  /** Path parameters, for the document only: ids are checked by the services (unknown → 404). */
  params?: Joi.ObjectSchema;
  query?: Joi.ObjectSchema;
  body?: Joi.ObjectSchema;
  /**
   * A page people open in a browser: errors are answered as HTML unless JSON is asked for.
   * Off `/api` that is the default; `false` answers errors in JSON whatever is asked (feeds).
   */
  page?: boolean;
  /** Documented only: served outside the Express router (the smart-link ingest path). */
  docsOnly?: boolean;
  /** Request body content types, JSON by default. */
  consumes?: string[];
  /**
   * The body is declared for the document and checked by the handler: a page's form, whose
   * refusal is that page again with what was typed and each problem beside its field.
   */
  bodyCheckedByHandler?: boolean;
  /** Cross-field rules, run on the converted input even when some fields failed. */
  check?: (input: RouteInput<P, Q, B>) => FieldErrors;
  responses: Record<number, ResponseSpec>;
  /** Limits of this route beside the plan's API limits (counted together, one verdict). */
  limits?: (auth: AuthContext) => LimitCheck[];
  /** Middleware run after auth and before validation (rate limits, body parsers). */
  before?: RequestHandler[];
  /** Returns a Reply to send as JSON, or nothing when it answered `res` itself. */
  handler: (input: RouteInput<P, Q, B>, req: Request, res: Response) => Promise<Reply | void>;
}

export function defineRoute<P = Record<string, string>, Q = Record<string, unknown>, B = Record<string, unknown>>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}

interface MountOptions {
  authenticate: RequestHandler;
  /** Run after authenticate on every authenticated route: the plan's API request limits, plus the route's own. */
  rateLimit: (extra?: RouteSpec['limits']) => RequestHandler;
}

/**
 * The query parameters that carry a value: `?range=` is a parameter not given (forms and URL
 * builders send every field, filled or not), so it gets its default, and a required one is
 * reported missing, instead of an empty value failing each of its rules.
 */
function givenQueryValues(query: Request['query']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) if (value !== '') out[key] = value;
  return out;
}

/** Mounts the routes on an Express router with auth, validation and JSON replies. */
export function mountRoutes(app: Router, routes: RouteSpec[], opts: MountOptions): void {
  // Two routers, chosen by one prefix test: a public page or feed request does not walk the
  // API's routes (Express matches its layers one by one), and an API request does not walk
  // the pages'. Each keeps its routes' order and full paths (req.route.path stays whole).
  const api = Router();
  const site = Router();
  for (const route of routes) {
    const router = route.path.startsWith('/api/') ? api : site;
    if (route.docsOnly) continue;
    const chain: RequestHandler[] = [];
    if (route.page !== undefined) {
      chain.push((_req, res, next) => {
        res.locals.page = route.page;
        next();
      });
    }
    if (route.auth) chain.push(opts.authenticate, opts.rateLimit(route.limits));
    if (route.auth && route.role && route.role !== 'member') chain.push(requireRole(route.role));
    if (route.before) chain.push(...route.before);
    chain.push(async (req: Request, res: Response, _next: NextFunction) => {
      const params = { value: req.params as Record<string, string>, errors: {} };
      const query = validatePart<Record<string, unknown>>(route.query, givenQueryValues(req.query));
      const hasBodySchema = route.body !== undefined;
      const rawBody = req.body === undefined && hasBodySchema ? {} : req.body;
      const body = route.bodyCheckedByHandler ? { value: rawBody as Record<string, unknown>, errors: {} } : validatePart<Record<string, unknown>>(route.body, rawBody);
      const input = { params: params.value, query: query.value, body: body.value ?? {} };
      const extra = route.check ? route.check(input) : {};
      throwIfErrors(params.errors, query.errors, body.errors, extra);
      const reply = await route.handler(input, req, res);
      if (!reply || res.headersSent) return;
      if (reply.headers) res.set(reply.headers);
      res.status(reply.status).json(reply.body);
    });
    router[route.method](route.path, ...chain);
  }
  // Case-insensitive, as Express matches the routes themselves.
  app.use((req, res, next) => (req.path.slice(0, 5).toLowerCase() === '/api/' ? api(req, res, next) : site(req, res, next)));
}
