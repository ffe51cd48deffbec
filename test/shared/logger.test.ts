import { spawnSync } from 'node:child_process';
import { ReplyError } from 'ioredis';
import { capLine, MAX_LINE_BYTES, serializeError } from '../../shared/logging/logger';
import { ROOT } from '../helpers/processes';

describe('log lines', () => {
  it('an error is logged as type, code, message and stack: never the failed command and its arguments', () => {
    const err = Object.assign(new ReplyError("OOM command not allowed when used memory > 'maxmemory'."), {
      command: { name: 'evalsha', args: ['sha', '{"submissions":[{"title":"Dinner with Ann","location":"12 Home Street"}]}'] },
    });
    const logged = JSON.stringify(serializeError(err));
    expect(logged).toContain('OOM command not allowed');
    expect(logged).not.toContain('Dinner with Ann');
    expect(logged).not.toContain('evalsha');
    const long = serializeError(new Error('x'.repeat(50_000))) as { message: string };
    expect(long.message.length).toBeLessThan(1100);
    expect(long.message).toContain('(50000 characters)');
  });

  it('a line over the cap becomes a short one that says what it was', () => {
    const line = `${JSON.stringify({ level: 40, time: 't', service: 'gateway', reqId: 'r-1', payload: 'p'.repeat(100_000), msg: 'could not queue' })}\n`;
    const capped = capLine(line);
    expect(Buffer.byteLength(capped)).toBeLessThan(MAX_LINE_BYTES);
    expect(JSON.parse(capped)).toEqual({ level: 40, time: 't', service: 'gateway', reqId: 'r-1', msg: 'could not queue', truncated: true, bytes: Buffer.byteLength(line) });
    const short = `${JSON.stringify({ level: 30, msg: 'fine' })}\n`;
    expect(capLine(short)).toBe(short);
  });

  it('counts the cap in bytes: a line of multi-byte text under the cap in characters is still cut', () => {
    const line = `${JSON.stringify({ level: 30, msg: 'asked', title: '日'.repeat(MAX_LINE_BYTES / 2) })}\n`;
    expect(line.length).toBeLessThan(MAX_LINE_BYTES);
    const capped = capLine(line);
    expect(Buffer.byteLength(capped)).toBeLessThan(MAX_LINE_BYTES);
    expect(JSON.parse(capped)).toMatchObject({ msg: 'asked', truncated: true, bytes: Buffer.byteLength(line) });
    const fits = `${JSON.stringify({ level: 30, msg: 'é'.repeat(MAX_LINE_BYTES / 4) })}\n`;
    expect(capLine(fits)).toBe(fits);
  });

  it('writes every line whole, request lines and others interleaved, including those logged just before exit', () => {
    // A process (the built logger: npm test builds first) logs 20,000 lines in one turn,
    // multi-byte text among them, and exits at once.
    const logger = `${ROOT}/dist/shared/logging/logger.js`;
    const script = `
      const { createLogger, requestLineLogger } = require(${JSON.stringify(logger)});
      const log = createLogger('lines-test');
      const lines = requestLineLogger(log);
      for (let i = 0; i < 10000; i++) { log.info({ i, text: 'Grüße 日本 ' + i }, 'other'); lines.info({ i, status: 202 }, 'request completed'); }
      process.exit(0);`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const parsed = run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { i: number; msg: string; text?: string });
    expect(parsed).toHaveLength(20_000);
    expect(parsed[0]).toMatchObject({ i: 0, msg: 'other', text: 'Grüße 日本 0', service: 'lines-test' });
    expect(parsed[19_999]).toMatchObject({ i: 9999, msg: 'request completed', status: 202 });
    expect(parsed.filter((l) => l.msg === 'other').map((l) => l.i)).toEqual([...Array(10_000).keys()]);
  });
});
