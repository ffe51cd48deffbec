import type Joi from 'joi';
import parse from 'joi-to-json';
import { errors, messageSchema, VALIDATION_FAILED, validationErrorSchema } from '../http/responses';
import type { RouteSpec } from '../http/route';

type JsonSchema = Record<string, unknown>;

/**
 * joi-to-json writes `Joi.object().pattern(/re/, …)` both as patternProperties (right) and
 * as a property literally named "/re/" (wrong); drop the latter.
 */
function dropRegexNamedProperties(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    node.forEach(dropRegexNamedProperties);
    return;
  }
  const obj = node as Record<string, unknown>;
  if (obj.patternProperties && obj.properties && typeof obj.properties === 'object') {
    for (const key of Object.keys(obj.properties)) if (/^\/.*\/[a-z]*$/.test(key)) delete (obj.properties as Record<string, unknown>)[key];
  }
  Object.values(obj).forEach(dropRegexNamedProperties);
}

const toJsonSchema = (schema: Joi.Schema): JsonSchema => {
  const json = parse(schema, 'open-api-3.1') as JsonSchema;
  dropRegexNamedProperties(json);
  return json;
};

/** `/api/calendars/:cal` → `/api/calendars/{cal}` */
const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');

type Parameter = { name: string; in: 'path' | 'query'; required: boolean; description?: string; schema: JsonSchema };

function parameters(schema: Joi.ObjectSchema | undefined, where: 'path' | 'query'): Parameter[] {
  if (!schema) return [];
  const json = toJsonSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, prop]) => {
    const { description, ...rest } = prop as { description?: string };
    return {
      name,
      in: where,
      required: where === 'path' ? true : (json.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

/**
 * Exactly the parameters the path names, in its order (OpenAPI requires each one, and no
 * other): described by the route's params schema where it declares them, else a string.
 */
function pathParameters(path: string, schema: Joi.ObjectSchema | undefined): Parameter[] {
  const declared = parameters(schema, 'path');
  return [...path.matchAll(/\{([^{}]+)\}/g)].map(([, name]) => declared.find((p) => p.name === name) ?? { name, in: 'path', required: true, schema: { type: 'string' } });
}

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: "Requests a minute allowed by the plan's limit nearest its end (absent on unlimited plans)", schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current minute under that limit', schema: { type: 'integer' } },
};
const RETRY_AFTER = { 'Retry-After': { description: 'Seconds until a request is accepted again', schema: { type: 'integer' } } };

/**
 * What the HTTP layer answers for any route declared this way, listed even where a route
 * does not: a path parameter can arrive as broken percent-encoding (400, before the route
 * runs); a declared body can be malformed (400), too large (413), in another content type
 * (415, JSON routes) or invalid (422); a declared query can be invalid (422). Outside /api a
 * browser gets these as a page.
 */
function impliedResponses(route: RouteSpec): Record<string, unknown> {
  const api = route.path.startsWith('/api/');
  const content = (schema: Joi.Schema) => ({
    ...(api ? {} : { 'text/html': {} }),
    'application/json': { schema: toJsonSchema(schema) },
  });
  const out: Record<string, unknown> = {};
  const malformed = [route.path.includes(':') ? 'a path that is not valid percent-encoding' : '', route.body ? 'a malformed body' : ''].filter(Boolean);
  if (malformed.length) out['400'] = { description: `Malformed request: ${malformed.join(', or ')}`, content: content(messageSchema) };
  if (route.body) {
    out['413'] = { description: 'Body over the size limit', content: content(messageSchema) };
    if (api) out['415'] = { description: 'Body in a content type this endpoint does not take', content: content(messageSchema) };
  }
  if (route.body || route.query) out['422'] = { description: VALIDATION_FAILED, content: content(validationErrorSchema) };
  if (route.auth && (route.role || route.method !== 'get')) {
    out['403'] = {
      description: [route.role ? `The caller's role is below ${route.role}` : '', route.method !== 'get' ? 'a dashboard session without its X-CSRF-Token' : ''].filter(Boolean).join(', or '),
      content: content(messageSchema),
    };
  }
  return { ...out, ...TIMEOUT };
}

/** Every tag an operation may carry, in the order the reference shows them. */
const TAGS = [
  { name: 'Calendars', description: "A team's calendars: name, time zone, short link." },
  { name: 'Events', description: 'Events with their add-to-calendar links and snippets; listing, search, approval of smart-link events, signed URLs for protected events.' },
  { name: 'Invites', description: 'People invited by email: each gets the event as a calendar invitation, then its updates and cancellation.' },
  { name: 'RSVPs', description: "Answers given on an event's page, and the organizer's view of them." },
  { name: 'Subscribers', description: "People subscribed to a calendar's feed through the subscribe links." },
  { name: 'Smart links', description: 'URLs that turn form posts and webhooks into events, and their submissions.' },
  { name: 'Extraction', description: 'Free text (a sentence, an email) read into event fields.' },
  { name: 'Webhooks', description: 'Endpoints told what happens (events created, changed, approved, deleted), signed as Standard Webhooks and retried for days.' },
  { name: 'Analytics', description: 'Page views, adds to calendars by platform, feed fetches and RSVPs, per day; nothing that identifies a visitor is kept.' },
  { name: 'Dynamic links', description: 'Add-to-calendar links made from query parameters, without storing an event.' },
  { name: 'Account', description: 'The caller, its team, plan and usage; browser-extension tokens.' },
  { name: 'Sessions', description: 'Signing in to the dashboard: emailed one-time links, passwords, sign-up, sessions and sign-out.' },
  { name: 'API tokens', description: "The team's API and extension tokens: create (shown once), list with last use, revoke." },
  { name: 'Members', description: "The team's people and their roles (owner, admin, member); invitations by email." },
  { name: 'Public pages', description: 'What visitors open without a token: event and calendar pages, platform links, .ics files and feeds.' },
  { name: 'Documentation', description: 'This document and its interactive reference.' },
  { name: 'System', description: 'Liveness, readiness, metrics and robots.txt.' },
];

/**
 * OPTIONS on any path the service serves: 204 with `Allow` (a method not listed there is a
 * 405 with the same header). The smart-link path also answers CORS preflights.
 */
function optionsOperation(path: string, operations: Record<string, unknown>): Record<string, unknown> {
  const allow = ['OPTIONS', ...Object.keys(operations).map((m) => m.toUpperCase())].join(', ');
  const tags = (Object.values(operations)[0] as { tags?: string[] }).tags ?? [];
  const cors = path.startsWith('/s/');
  return {
    operationId: `options${path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: `The methods this address takes (${allow})`,
    description: `204 with \`Allow: ${allow}\`; any other method is answered 405 with the same \`Allow\`.${cors ? ' A browser preflight gets the CORS headers that let a page on any origin post a form or JSON here.' : ''}`,
    tags,
    security: [],
    parameters: pathParameters(path, undefined),
    responses: {
      204: {
        description: 'The methods this address takes',
        headers: {
          Allow: { description: 'The methods this address takes', schema: { type: 'string' } },
          ...(cors ? { 'Access-Control-Allow-Origin': { description: 'Any origin (`*`)', schema: { type: 'string' } } } : {}),
        },
      },
      ...TIMEOUT,
    },
  };
}

/** Node answers any request whose headers, or whole body, do not arrive in time. */
const TIMEOUT = {
  408: { description: 'The request did not arrive in time (HTTP_HEADERS_TIMEOUT_MS for its headers, HTTP_REQUEST_TIMEOUT_MS for all of it); the connection is closed' },
};

interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
}

/** The OpenAPI 3.1 document, built from the same route declarations that validate requests. */
export function buildOpenApi(routes: RouteSpec[], info: OpenApiInfo): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = toOpenApiPath(route.path);
    const responses: Record<string, unknown> = {};
    // Every authenticated route counts against the plan's request limits.
    const declared = route.auth ? { ...route.responses, ...(route.responses[429] ? {} : errors(429)) } : route.responses;
    for (const [status, spec] of Object.entries(declared)) {
      const content: Record<string, unknown> = {};
      for (const type of [spec.contentType ?? []].flat()) content[type] = {};
      if (spec.body) content['application/json'] = { schema: toJsonSchema(spec.body) };
      responses[status] = { description: spec.description, ...(Object.keys(content).length ? { content } : {}) };
    }
    for (const [status, response] of Object.entries(impliedResponses(route))) responses[status] ??= response;
    // Past authentication every answer counts against the plan's limits and says where it stands.
    if (route.auth) {
      for (const [status, response] of Object.entries(responses)) {
        if (status !== '401') (response as Record<string, unknown>).headers = status === '429' ? { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER } : RATE_LIMIT_HEADERS;
      }
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description || route.role ? { description: [route.description, route.role ? `Needs the ${route.role} role (or above) in the team.` : ''].filter(Boolean).join(' ') } : {}),
      tags: route.tags,
      parameters: [...pathParameters(path, route.params), ...parameters(route.query, 'query')],
      responses,
      ...(route.auth ? { security: [{ bearerAuth: [] }, { sessionCookie: [] }] } : { security: [] }),
      ...(route.auth ? { 'x-required-role': route.role ?? 'member' } : {}),
    };
    if (route.body) {
      const schema = toJsonSchema(route.body) as { required?: string[] };
      const types = route.consumes ?? ['application/json'];
      operation.requestBody = {
        // A body whose every field is optional may be left out (an empty POST takes the defaults).
        required: (schema.required ?? []).length > 0,
        content: Object.fromEntries(types.map((t) => [t, { schema }])),
      };
    }
    (paths[path] ??= {})[route.method] = operation;
  }
  for (const [path, operations] of Object.entries(paths)) operations.options = optionsOperation(path, operations);
  const used = new Set(routes.flatMap((r) => r.tags));
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description, license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: info.serverUrl }],
    tags: TAGS.filter((t) => used.has(t.name)),
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token: `Authorization: Bearer <token>`' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'cs_session',
          description:
            'A dashboard session (POST /api/auth/sessions sets it; named `__Host-cs_session` where the service runs on https or in production). Requests that change something also need `X-CSRF-Token` (GET /api/session gives it).',
        },
      },
    },
    paths,
  };
}
