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

  it('requires APP_KEY in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/APP_KEY is required/);
    expect(loadConfig({ NODE_ENV: 'production', APP_KEY: 'k'.repeat(32) }).appKeyIsDefault).toBe(false);
  });
});
