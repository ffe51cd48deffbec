import { ReplyError } from 'ioredis';
import { capLine, MAX_LINE_BYTES, serializeError } from '../../shared/logging/logger';

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
});
