import express from 'express';
import { ConfigError, loadConfig } from '../../shared/config/config';

describe('configuration', () => {
  it('has working defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      databaseUrl: 'postgres://postgres:postgres@127.0.0.1:5432/calendar',
      redis: 'redis://127.0.0.1:6379',
      publicBaseUrl: 'http://localhost:3000',
      smtpUrl: null,
      mailFrom: 'Calendar <no-reply@localhost>',
      appKeyIsDefault: true,
    });
  });

  it('reads TRUST_PROXY as a hop count when it is a number, else as addresses', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe('loopback, 10.0.0.0/8');
    expect(loadConfig({ TRUST_PROXY: 'linklocal,uniquelocal,192.168.0.1,fd00::/8,10.0.0.0/255.0.0.0' }).trustProxy).toBe(
      'linklocal,uniquelocal,192.168.0.1,fd00::/8,10.0.0.0/255.0.0.0',
    );
  });

  it('accepts only a TRUST_PROXY Express takes', () => {
    for (const value of ['2', '127.0.0.1', 'loopback, 10.0.0.0/8', 'linklocal,uniquelocal,fd00::/8']) {
      expect(() => express().set('trust proxy', loadConfig({ TRUST_PROXY: value }).trustProxy)).not.toThrow();
    }
  });

  it('refuses a TRUST_PROXY Express could not compile, with the other problems', () => {
    for (const [value, entry] of [
      ['maybe', 'invalid IP address: maybe'],
      ['loopback, proxy.internal', 'invalid IP address: proxy.internal'],
      ['10.0.0.0/33', 'invalid range on address: 10.0.0.0/33'],
      ['loopback,', 'invalid IP address: '],
      ['true', 'invalid IP address: true'],
    ]) {
      let error: ConfigError | undefined;
      try {
        loadConfig({ TRUST_PROXY: value, PORT: '70000' });
      } catch (err) {
        error = err as ConfigError;
      }
      expect(error?.problems).toHaveLength(2);
      expect(error?.problems[0]).toMatch(/^PORT: /);
      expect(error?.problems[1]).toBe(
        `TRUST_PROXY must be a number of proxy hops, or addresses, subnets and loopback/linklocal/uniquelocal, comma-separated (${entry})`,
      );
    }
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

  it('lists the problems across settings with every other problem', () => {
    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(env);
      } catch (err) {
        return (err as ConfigError).problems;
      }
      return [];
    };
    const production = problems({ NODE_ENV: 'production', PORT: '70000' });
    expect(production).toHaveLength(2);
    expect(production[0]).toMatch(/^PORT: /);
    expect(production[1]).toBe('APP_KEY is required when NODE_ENV=production');

    expect(problems({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '4000', MAIL_FROM: 'Calendar' })).toEqual([
      'HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS',
      'MAIL_FROM must be an address, e.g. "Calendar <no-reply@example.com>"',
    ]);

    const shortKey = problems({ APP_KEY: 'short', HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '4000', MAIL_FROM: 'Calendar' });
    expect(shortKey).toHaveLength(3);
    expect(shortKey[0]).toMatch(/^APP_KEY: .*at least 32 characters/);
    expect(shortKey.slice(1)).toEqual([
      'HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS',
      'MAIL_FROM must be an address, e.g. "Calendar <no-reply@example.com>"',
    ]);

    // A setting the schema refuses is reported once, not again by a rule that reads it.
    const badKeyInProduction = problems({ NODE_ENV: 'production', APP_KEY: 'short', HTTP_REQUEST_TIMEOUT_MS: 'later' });
    expect(badKeyInProduction.map((p) => p.split(':')[0])).toEqual(['APP_KEY', 'HTTP_REQUEST_TIMEOUT_MS']);
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

  it("reads the rules extractor's time budget per text, 1 ms to a minute", () => {
    expect(loadConfig({}).extractTimeoutMs).toBe(1000);
    expect(loadConfig({ EXTRACT_TIMEOUT_MS: '5' }).extractTimeoutMs).toBe(5);
    for (const bad of ['0', '-1', '1.5', '60001', 'soon']) expect(() => loadConfig({ EXTRACT_TIMEOUT_MS: bad })).toThrow(/EXTRACT_TIMEOUT_MS/);
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

  it('reads REDIS_URL as one server, or with REDIS_CLUSTER=true as a cluster\'s seed nodes', () => {
    expect(loadConfig({ REDIS_URL: 'rediss://user:pw@redis.internal:6380/2' }).redis).toBe('rediss://user:pw@redis.internal:6380/2');
    expect(loadConfig({ REDIS_CLUSTER: 'true' }).redis).toEqual({ cluster: ['redis://127.0.0.1:6379'] });
    expect(loadConfig({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://:pw@10.0.0.1:7000,redis://:pw@10.0.0.2:7000/0' }).redis).toEqual({
      cluster: ['redis://:pw@10.0.0.1:7000', 'redis://:pw@10.0.0.2:7000/0'],
    });
    expect(loadConfig({ REDIS_CLUSTER: 'false' }).redis).toBe('redis://127.0.0.1:6379');
  });

  it('refuses what a cluster cannot work with, and seed lists without REDIS_CLUSTER', () => {
    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(env);
      } catch (err) {
        return (err as ConfigError).problems;
      }
      return [];
    };
    expect(problems({ REDIS_URL: 'redis://a:7000,redis://b:7000' })).toEqual([
      'REDIS_URL lists several servers: set REDIS_CLUSTER=true if they are seed nodes of a Redis Cluster (one server takes one URL)',
    ]);
    expect(problems({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://a:7000, redis://b:7000' })).toEqual([
      'REDIS_URL: "REDIS_URL" must be a redis:// or rediss:// URL, or with REDIS_CLUSTER=true several, comma-separated',
    ]);
    expect(problems({ REDIS_CLUSTER: 'yes' })[0]).toMatch(/^REDIS_CLUSTER: .*boolean/);
    expect(problems({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://:one@a:7000,redis://:two@b:7000' })).toEqual([
      'REDIS_URL: the seed nodes of a Redis Cluster must share scheme, user and password (every node is connected with the same)',
    ]);
    expect(problems({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://a:7000,rediss://b:7000' })).toHaveLength(1);
    expect(problems({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://a:7000/3' })).toEqual(['REDIS_URL: a Redis Cluster has database 0 only; leave the database number out']);
    // Every key must hash to one slot: without a hash tag BullMQ's scripts would fail with CROSSSLOT.
    for (const prefix of ['cal', '{}cal', 'cal{', '{}{cal}']) {
      expect(problems({ REDIS_CLUSTER: 'true', QUEUE_PREFIX: prefix })).toEqual([
        'QUEUE_PREFIX must hold a Redis Cluster hash tag when REDIS_CLUSTER=true, e.g. {cal} or {cal-staging}: the text in braces puts every key in one slot',
      ]);
      // One server has no slots: any prefix works there, as before.
      expect(problems({ QUEUE_PREFIX: prefix })).toEqual([]);
    }
    for (const prefix of ['{cal}', 'calendar{eu}', '{cal-staging}']) expect(problems({ REDIS_CLUSTER: 'true', QUEUE_PREFIX: prefix })).toEqual([]);
  });

  it('requires APP_KEY in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/APP_KEY is required/);
    expect(loadConfig({ NODE_ENV: 'production', APP_KEY: 'k'.repeat(32) }).appKeyIsDefault).toBe(false);
  });
});
