import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataOf, errors } from '../http/responses';
import { accepted, defineRoute, ok, type RouteSpec } from '../http/route';
import type { ExtractionWaiter } from './extraction-waiter';
import { toExtractionJson } from '../../../shared/extractions/extraction-json';
import { awaitExtraction, readExtraction, requestExtraction } from './extractions.service';
import {
  type ExtractInput,
  extractBody,
  extractionParams,
  extractionSchema,
  extractQuery,
  pendingExtractionSchema,
} from './extractions.schemas';

/**
 * Free text into event fields (docs/extraction.md): the gateway validates and queues, the extraction
 * worker reads the text. Mounted before the events routes, whose `/api/events/:evt` would
 * otherwise be asked about "extract".
 */
export function extractionRoutes(deps: AppContext, waiter: ExtractionWaiter): RouteSpec[] {
  const tags = ['Extraction'];
  const finished = { description: 'The extraction (completed or failed)', body: dataOf(extractionSchema) };
  const location = (id: string) => ({ Location: `${deps.config.publicBaseUrl}/api/events/extract/${id}` });
  return [
    defineRoute<Record<string, never>, { wait: number }, ExtractInput>({
      method: 'post',
      path: '/api/events/extract',
      operationId: 'extractEvent',
      summary: 'Read free text into event fields',
      description:
        'Queues the text for the extraction worker and answers 202 with the extraction id; `GET /api/events/extract/{ext}` gives the result, whose fields can be posted to the create endpoint as they are. With `?wait=N` (seconds, 0–10) the answer is 200 with the finished extraction when it is ready in time. Texts are read in English; a text in another language (German, French, Spanish…) ends `failed` with `error: "unsupported_language"` rather than with a misread date. Counts against the plan extractions per minute (per team) and its API request limits, not the monthly event limit.',
      tags,
      auth: true,
      query: extractQuery,
      body: extractBody,
      limits: (auth) => [{ scope: 'extraction', key: auth.teamId, perMinute: auth.limits.extractionsPerMinute }],
      responses: {
        200: finished,
        202: { description: 'Queued (`Location` names the extraction)', body: pendingExtractionSchema },
        ...errors(400, 401, 413, 415, 422, 429, 503),
      },
      handler: async ({ body, query }, req) => {
        const row = await requestExtraction(deps, authOf(req), body, req.id);
        const done = await awaitExtraction(deps, waiter, row, query.wait);
        if (done) return ok({ data: toExtractionJson(done) });
        const id = toExtractionJson(row).id;
        return accepted({ data: { id, status: 'pending' } }, location(id));
      },
    }),
    defineRoute<{ ext: string }>({
      method: 'get',
      path: '/api/events/extract/:ext',
      operationId: 'getExtraction',
      summary: 'An extraction and, once completed, its result',
      description:
        '`pending` while the worker reads the text, then `completed` with `result` (the event fields found) or `failed` with `error` (a sentence, `unsupported_language` for a text not in English, or `extraction_timeout`). Another team\'s extraction is a 404.',
      tags,
      auth: true,
      params: extractionParams,
      responses: { 200: { description: 'The extraction', body: dataOf(extractionSchema) }, ...errors(401, 404, 503) },
      handler: async ({ params }, req) => ok({ data: toExtractionJson(await readExtraction(deps, authOf(req).teamId, params.ext)) }),
    }),
  ];
}
