import type Joi from 'joi';
import parse from 'joi-to-json';
import type { RouteSpec } from '../http/route';
import { errors } from '../http/responses';

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
export const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');

function parameters(schema: Joi.ObjectSchema | undefined, where: 'path' | 'query') {
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

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: "Requests a minute allowed by the plan's limit nearest its end (absent on unlimited plans)", schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current minute under that limit', schema: { type: 'integer' } },
};
const RETRY_AFTER = { 'Retry-After': { description: 'Seconds until a request is accepted again', schema: { type: 'integer' } } };

export interface OpenApiInfo {
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
      if (spec.contentType) content[spec.contentType] = {};
      if (spec.body) content['application/json'] = { schema: toJsonSchema(spec.body) };
      const headers = route.auth && status !== '401' ? { headers: status === '429' ? { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER } : RATE_LIMIT_HEADERS } : {};
      responses[status] = { description: spec.description, ...headers, ...(Object.keys(content).length ? { content } : {}) };
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
      responses,
      ...(route.auth ? { security: [{ bearerAuth: [] }] } : { security: [] }),
    };
    if (route.body) {
      const schema = toJsonSchema(route.body);
      const types = route.consumes ?? ['application/json'];
      operation.requestBody = {
        required: route.method === 'post' || route.method === 'put',
        content: Object.fromEntries(types.map((t) => [t, { schema }])),
      };
    }
    (paths[path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token: `Authorization: Bearer <token>`' },
      },
    },
    paths,
  };
}
