import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../shared/config/config';
import { createLogger } from '../../shared/logging/logger';
import { extractorFor } from '../../services/extraction-worker/extractor/fallback-extractor';
import { LlmExtractor } from '../../services/extraction-worker/extractor/llm-extractor';
import { RulesExtractor } from '../../services/extraction-worker/extractor/rules-extractor';

/**
 * The optional model-based extractor against a fake OpenAI-compatible endpoint started
 * here (the model is an outside service; everything of ours is real).
 */
type Handler = (body: Record<string, unknown>, req: http.IncomingMessage, res: http.ServerResponse) => void;

let server: http.Server;
let url: string;
let handler: Handler = (_body, _req, res) => res.end();
const requests: Array<{ body: Record<string, unknown>; authorization?: string }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      requests.push({ body, authorization: req.headers.authorization });
      handler(body, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  requests.length = 0;
});

const log = createLogger('llm-test', 'silent');
const input = { text: 'Roadmap review next Tuesday at 1pm in Room 1', timezone: 'America/New_York', referenceDate: new Date('2026-03-05T15:00:00Z') };
const rules = new RulesExtractor();
const answer = (content: unknown) => (_body: Record<string, unknown>, _req: http.IncomingMessage, res: http.ServerResponse) => {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: typeof content === 'string' ? content : JSON.stringify(content) } }] }));
};
const modelAnswer = {
  title: 'Roadmap review (model)',
  description: null,
  location: 'Room 1',
  date_start: '2026-03-10T13:00',
  date_end: '2026-03-10T14:00',
  timezone: 'America/New_York',
  is_all_day: false,
  recurrence_rule: null,
};
const neverAnswers: Handler = () => undefined;
// A timeout long enough for a loaded machine; the test of the timeout itself sets a short one.
const configured = (extra: Record<string, string> = {}) =>
  loadConfig({ EXTRACT_LLM_URL: url, EXTRACT_LLM_MODEL: 'test-model', EXTRACT_LLM_API_KEY: 'sk-test', EXTRACT_LLM_TIMEOUT_MS: '10000', ...extra }).extractLlm;

describe('the model-based extractor', () => {
  it('asks the endpoint and normalizes its answer like the rules do', async () => {
    handler = answer(`\`\`\`json\n${JSON.stringify(modelAnswer)}\n\`\`\``);
    const llm = configured();
    if (!llm) throw new Error('EXTRACT_LLM_URL should configure the model');
    const result = await new LlmExtractor(llm).extract(input);
    expect(result).toEqual({ ...modelAnswer, date_start: '2026-03-10T13:00:00-04:00', date_end: '2026-03-10T14:00:00-04:00' });
    expect(requests).toHaveLength(1);
    expect(requests[0].authorization).toBe('Bearer sk-test');
    expect(requests[0].body).toMatchObject({ model: 'test-model', temperature: 0 });
    const user = (requests[0].body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'user');
    expect(JSON.parse(user?.content ?? '{}')).toEqual({ text: input.text, timezone: 'America/New_York', reference_time: '2026-03-05T10:00:00-05:00' });
  });

  it("answers the IANA spelling of the model's zone", async () => {
    handler = answer({ ...modelAnswer, timezone: 'europe/berlin' });
    const llm = configured();
    if (!llm) throw new Error('EXTRACT_LLM_URL should configure the model');
    const result = await new LlmExtractor(llm).extract(input);
    expect(result).toMatchObject({ timezone: 'Europe/Berlin', date_start: '2026-03-10T13:00:00+01:00' });
  });

  it('is used first when EXTRACT_LLM_URL is set, and not at all otherwise', async () => {
    handler = answer(modelAnswer);
    const withModel = extractorFor(configured(), rules, log);
    expect(withModel.name).toBe('llm+rules');
    expect((await withModel.extract(input)).title).toBe('Roadmap review (model)');
    const rulesOnly = extractorFor(loadConfig({}).extractLlm, rules, log);
    expect(rulesOnly.name).toBe('rules');
    requests.length = 0;
    expect((await rulesOnly.extract(input)).title).toBe('Roadmap review');
    expect(requests).toHaveLength(0);
  });
});

describe('falling back to the rules', () => {
  const rulesAnswer = () => rules.extract(input);

  it.each<[string, Handler]>([
    ['the endpoint fails', (_b, _r, res) => res.writeHead(500).end('{"error":"overloaded"}')],
    ['the answer is not JSON', answer('I am sorry, I cannot help with that.')],
    ['the answer has impossible dates', answer({ ...modelAnswer, date_start: '2026-02-30T13:00' })],
    ['the answer ends before it starts', answer({ ...modelAnswer, date_end: '2026-03-10T12:00' })],
    ['the answer has a broken RRULE', answer({ ...modelAnswer, recurrence_rule: 'FREQ=SOMETIMES' })],
    ['the answer lacks fields', answer({ title: 'x' })],
    // The endpoint takes the request and never answers: the timeout gives up on it.
    ['the endpoint does not answer in time', neverAnswers],
  ])('when %s', async (_what, h) => {
    handler = h;
    const result = await extractorFor(configured(h === neverAnswers ? { EXTRACT_LLM_TIMEOUT_MS: '300' } : {}), rules, log).extract(input);
    expect(result).toEqual(await rulesAnswer());
    expect(requests).toHaveLength(1);
  });

  it('when the endpoint cannot be reached', async () => {
    const closed = loadConfig({ EXTRACT_LLM_URL: 'http://127.0.0.1:1/v1/chat/completions', EXTRACT_LLM_TIMEOUT_MS: '300' }).extractLlm;
    expect(await extractorFor(closed, rules, log).extract(input)).toEqual(await rulesAnswer());
  });
});
