import { ConfigError, loadConfig } from '../../shared/config/config';

describe('configuration', () => {
  it('has working defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      databaseUrl: 'postgres://postgres:postgres@127.0.0.1:5432/calendar',
      redisUrl: 'redis://127.0.0.1:6379',
      publicBaseUrl: 'http://localhost:3000',
      smtpUrl: null,
      mailFrom: 'Calendar <no-reply@localhost>',
      appKeyIsDefault: true,
    });
  });

  it('derives PUBLIC_BASE_URL from PORT and drops a trailing slash', () => {
    expect(loadConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://cal.example.com/' }).publicBaseUrl).toBe('https://cal.example.com');
  });

  it('lists every problem at once', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig({ PORT: 'abc', DATABASE_URL: 'mysql://x', REDIS_URL: 'nope', SMTP_URL: 'http://mail', APP_KEY: 'short' });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems.map((p) => p.split(':')[0]).sort()).toEqual(['APP_KEY', 'DATABASE_URL', 'PORT', 'REDIS_URL', 'SMTP_URL']);
  });

  it('configures the model-based extractor only when EXTRACT_LLM_URL is set', () => {
    expect(loadConfig({}).extractLlm).toBeNull();
    expect(loadConfig({ EXTRACT_LLM_URL: 'http://127.0.0.1:11434/v1/chat/completions' }).extractLlm).toEqual({
      url: 'http://127.0.0.1:11434/v1/chat/completions',
      model: 'gpt-4o-mini',
      apiKey: null,
      timeoutMs: 8000,
    });
    expect(() => loadConfig({ EXTRACT_LLM_URL: 'ftp://model', EXTRACT_LLM_TIMEOUT_MS: '5' })).toThrow(/EXTRACT_LLM_URL[\s\S]*EXTRACT_LLM_TIMEOUT_MS/);
  });

  it('reads the mail settings, and refuses a MAIL_FROM that is not one address', () => {
    expect(loadConfig({}).mail).toEqual({ poolSize: 5, concurrency: 4, batchSize: 10, ratePerSecond: 100, maxAttempts: 10, backoffMs: 30000 });
    expect(loadConfig({ MAIL_RATE_PER_SECOND: '0', MAIL_POOL_SIZE: '2', MAIL_BACKOFF_MS: '50' }).mail).toMatchObject({ ratePerSecond: 0, poolSize: 2, backoffMs: 50 });
    expect(loadConfig({ MAIL_FROM: 'ops@example.com' }).mailFrom).toBe('ops@example.com');
    expect(() => loadConfig({ MAIL_FROM: 'Calendar' })).toThrow(/MAIL_FROM must be an address/);
    expect(() => loadConfig({ MAIL_FROM: 'a@example.com, b@example.com' })).toThrow(/MAIL_FROM must be an address/);
    expect(() => loadConfig({ MAIL_POOL_SIZE: '0', WORKER_LOCK_MS: '10' })).toThrow(/MAIL_POOL_SIZE[\s\S]*WORKER_LOCK_MS/);
  });

  it('reads the HTTP timeouts for slow clients, and refuses a headers timeout longer than the request one', () => {
    expect(loadConfig({})).toMatchObject({ httpHeadersTimeoutMs: 10_000, httpRequestTimeoutMs: 30_000 });
    expect(loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' })).toMatchObject({ httpHeadersTimeoutMs: 1000, httpRequestTimeoutMs: 2000 });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '4000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: 'soon', HTTP_REQUEST_TIMEOUT_MS: '0' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS[\s\S]*HTTP_REQUEST_TIMEOUT_MS/);
  });

  it('requires APP_KEY in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/APP_KEY is required/);
    expect(loadConfig({ NODE_ENV: 'production', APP_KEY: 'k'.repeat(32) }).appKeyIsDefault).toBe(false);
  });
});
