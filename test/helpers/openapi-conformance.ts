import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

type DocOperation = {
  parameters?: Array<{ name: string; in: string }>;
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
};
type Doc = { paths: Record<string, Record<string, DocOperation>> };

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  pathParams: string[];
  responses: DocOperation['responses'];
}

/**
 * Checks an HTTP exchange against the OpenAPI document: the path and method are documented,
 * the status is among the operation's responses, and a JSON body matches its schema.
 */
export class OpenApiConformance {
  private readonly ops: Operation[] = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly compiled = new Map<object, ValidateFunction>();

  constructor(doc: Doc) {
    addFormats(this.ajv);
    for (const [template, methods] of Object.entries(doc.paths)) {
      const pattern = new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^{}]+\}/g, '[^/]+')}$`);
      for (const [method, op] of Object.entries(methods)) {
        const pathParams = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        this.ops.push({ method: method.toUpperCase(), template, pattern, pathParams, responses: op.responses });
      }
    }
    // Literal paths before templated ones (/api/events/extract before /api/events/{evt}),
    // and the more specific template first (/c/{uid}.ics before /c/{uid}).
    const literalLength = (t: string) => t.replace(/\{[^{}]+\}/g, '').length;
    this.ops.sort((a, b) => (a.template.includes('{') ? 1 : 0) - (b.template.includes('{') ? 1 : 0) || literalLength(b.template) - literalLength(a.template));
  }

  /** Operations whose declared path parameters are not exactly the {names} in their path. */
  pathParameterProblems(): string[] {
    const list = (names: string[]) => `[${[...names].sort().join(', ')}]`;
    return this.ops
      .map((op) => ({ op, named: [...op.template.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]) }))
      .filter(({ op, named }) => list(op.pathParams) !== list(named))
      .map(({ op, named }) => `${op.method} ${op.template} declares path parameters ${list(op.pathParams)}, its path names ${list(named)}`);
  }

  /** Returns a list of problems (empty when the exchange conforms). */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): string[] {
    const cleanPath = path.split('?')[0];
    const op = this.ops.find((o) => o.method === method.toUpperCase() && o.pattern.test(cleanPath));
    if (!op) return [`${method} ${cleanPath} is not in the OpenAPI document`];
    const response = op.responses[String(status)];
    if (!response) return [`${method} ${op.template} answered ${status}, which the document does not list`];
    // A body in a media type the document does not list for this status (a page where it
    // promises a calendar file). Answers documented without content (a redirect's short
    // note, a 204) are not held to one.
    const documented = Object.keys(response.content ?? {});
    const mediaType = contentType?.split(';')[0].trim().toLowerCase();
    if (documented.length && mediaType && !documented.includes(mediaType)) {
      return [`${method} ${op.template} ${status} answered ${mediaType}; the document lists ${documented.join(', ')}`];
    }
    if (!contentType?.includes('json')) return [];
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return [`${method} ${op.template} ${status} answered JSON but documents no JSON body`];
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${method} ${op.template} ${status}: body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  }
}
