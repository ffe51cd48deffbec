import { createCipheriv, createDecipheriv } from 'node:crypto';
import { decodeCursor, encodeCursor, idListing, isRowId, Listing } from '../../services/gateway/http/cursor';
import { AppError } from '../../shared/errors/app-error';

/*
 * List cursors: AES-256-GCM (NIST SP 800-38D) under a key derived with HKDF-SHA256
 * (RFC 5869) from APP_KEY. The vectors were made outside the code under test:
 *   openssl kdf -keylen 32 -kdfopt digest:SHA256 -kdfopt key:app-key-for-tests \
 *     -kdfopt salt:calendar-service -kdfopt 'info:list cursor' HKDF
 * gives KEY_HEX; Python's `cryptography` AESGCM(key).encrypt(bytes(range(12)), plaintext,
 * b'events') gave the cursors (base64url of the 12-byte IV, the 16-byte tag, then the body).
 */
const APP_KEY = 'app-key-for-tests';
const KEY_HEX = '4fb621a18b645375e5d29a6b5bc07ab01ae052bc0a4d00f4f822a42d24d22f5f';
/** `["2026-07-14T17:00:00.000Z",42]` for the listing `events`. */
const ROW_CURSOR = 'AAECAwQFBgcICQoL2dJrbRsqJqTtGZ90jxdRHaBrRyi-lF3OlMvSgadWydt9LdS5VRLT7G0MlK1vZyo';
/** `{"id":42}`: authentic, but not a list of values. */
const OBJECT_CURSOR = 'AAECAwQFBgcICQoLDew00UmAKWmdNFCHd-AXgYBrHHyumETM3g';
/** `[1,2`: authentic, but not JSON. */
const BROKEN_CURSOR = 'AAECAwQFBgcICQoLs7zQjeke4jHC9f1dXpa6maB4WSo';

type Row = [string, number];
const isRow = (v: unknown[]): v is Row => v.length === 2 && typeof v[0] === 'string' && isRowId(v[1]);
const anything = (_v: unknown[]): _v is (string | number)[] => true;

/** The 422 a bad cursor is: on the `cursor` field. */
function refused(run: () => unknown): void {
  let error: unknown;
  try {
    run();
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(AppError);
  expect(error).toMatchObject({ status: 422, body: { errors: { cursor: ['The cursor field is invalid.'] } } });
}

describe('list cursors', () => {
  it('read the known-answer cursors made with openssl and Python cryptography', () => {
    expect(decodeCursor(APP_KEY, 'events', ROW_CURSOR, isRow)).toEqual(['2026-07-14T17:00:00.000Z', 42]);
    refused(() => decodeCursor(APP_KEY, 'events', OBJECT_CURSOR, anything));
    refused(() => decodeCursor(APP_KEY, 'events', BROKEN_CURSOR, anything));
  });

  it('are AES-256-GCM under the HKDF key, with the listing as associated data, readable outside our code', () => {
    const values: Row = ['2026-07-14T17:00:00.000Z', 7];
    const cursor = encodeCursor(APP_KEY, 'webhooks', values);
    // URL-safe as it is: it goes into a query string (RFC 4648 5, no padding).
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const raw = Buffer.from(cursor, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(KEY_HEX, 'hex'), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from('webhooks'));
    decipher.setAuthTag(raw.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    expect(JSON.parse(plain)).toEqual(values);
    // And what we encrypt outside our code with that key reads back.
    const iv = Buffer.alloc(12, 9);
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(KEY_HEX, 'hex'), iv);
    cipher.setAAD(Buffer.from('rsvps'));
    const body = Buffer.concat([cipher.update('["é ü",3]', 'utf8'), cipher.final()]);
    const ours = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    expect(decodeCursor(APP_KEY, 'rsvps', ours, isRow)).toEqual(['é ü', 3]);
  });

  it('hide their values: a fresh IV each time, nothing of the values in the clear', () => {
    const a = encodeCursor(APP_KEY, 'events', ['x', 123456789]);
    const b = encodeCursor(APP_KEY, 'events', ['x', 123456789]);
    expect(a).not.toBe(b);
    expect(Buffer.from(a, 'base64url').subarray(0, 12).equals(Buffer.from(b, 'base64url').subarray(0, 12))).toBe(false);
    expect(Buffer.from(a, 'base64url').toString('latin1')).not.toContain('123456789');
    expect(decodeCursor(APP_KEY, 'events', a, isRow)).toEqual(['x', 123456789]);
    expect(decodeCursor(APP_KEY, 'events', b, isRow)).toEqual(['x', 123456789]);
  });

  it("are refused by another listing, under another APP_KEY, and when any byte is changed", () => {
    const cursor = encodeCursor(APP_KEY, 'events', ['2026-01-01T00:00:00.000Z', 5]);
    refused(() => decodeCursor(APP_KEY, 'invites', cursor, isRow));
    refused(() => decodeCursor(`${APP_KEY}2`, 'events', cursor, isRow));
    const raw = Buffer.from(cursor, 'base64url');
    // A byte of the IV, of the tag, of the body.
    for (const at of [0, 11, 12, 27, 28, raw.length - 1]) {
      const changed = Buffer.from(raw);
      changed[at] ^= 1;
      refused(() => decodeCursor(APP_KEY, 'events', changed.toString('base64url'), isRow));
    }
    refused(() => decodeCursor(APP_KEY, 'events', raw.subarray(0, raw.length - 1).toString('base64url'), isRow));
  });

  it('are refused when too short to hold an IV, a tag and a body, or not base64url at all', () => {
    const raw = Buffer.from(ROW_CURSOR, 'base64url');
    for (const length of [0, 1, 12, 20, 27, 28]) refused(() => decodeCursor(APP_KEY, 'events', raw.subarray(0, length).toString('base64url'), anything));
    for (const text of ['', '!!!!', 'not a cursor', '%00']) refused(() => decodeCursor(APP_KEY, 'events', text, anything));
  });

  it("are refused when their values are not what the listing's check expects", () => {
    for (const values of [[], ['x'], ['x', 0], ['x', -1], ['x', 1.5], [1, 1], ['x', 1, 2]]) {
      const cursor = encodeCursor(APP_KEY, 'events', values as (string | number)[]);
      expect(decodeCursor(APP_KEY, 'events', cursor, anything)).toEqual(values);
      refused(() => decodeCursor(APP_KEY, 'events', cursor, isRow));
    }
    // A value that is not a list never reaches the check.
    for (const value of [{ 0: 'x', 1: 1, length: 2 }, 'x', 1, null]) {
      const cursor = encodeCursor(APP_KEY, 'events', value as unknown as (string | number)[]);
      refused(() => decodeCursor(APP_KEY, 'events', cursor, anything));
    }
  });
});

describe('isRowId', () => {
  it('is a positive safe integer only', () => {
    expect([1, 2, 42, Number.MAX_SAFE_INTEGER].every(isRowId)).toBe(true);
    expect([0, -0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity, '1', null, undefined, 1n].some(isRowId)).toBe(false);
  });
});

describe('a listing', () => {
  const byId = idListing('rsvps');
  const rows = [{ id: 3 }, { id: 5 }, { id: 8 }];

  it('fetches one row more than a page, and pages with a cursor only when that row came', () => {
    expect(byId.fetchLimit(2)).toBe(3);
    expect(byId.fetchLimit(100)).toBe(101);
    const first = byId.page(APP_KEY, rows, 2, (last) => [last.id]);
    expect(first.rows).toEqual([{ id: 3 }, { id: 5 }]);
    // The cursor is of the last row shown, read by the listing and by the plain decoder alike.
    expect(byId.after(APP_KEY, first.nextCursor as string)).toEqual([5]);
    expect(decodeCursor(APP_KEY, 'rsvps', first.nextCursor as string, anything)).toEqual([5]);
    // A page that holds every row fetched is the last.
    expect(byId.page(APP_KEY, rows, 3, (last) => [last.id])).toEqual({ rows, nextCursor: null });
    expect(byId.page(APP_KEY, rows, 4, (last) => [last.id])).toEqual({ rows, nextCursor: null });
    expect(byId.page(APP_KEY, [], 4, (last: { id: number }) => [last.id])).toEqual({ rows: [], nextCursor: null });
  });

  it('starts at the beginning without a cursor, and refuses another listing\'s or a bad key', () => {
    expect(byId.after(APP_KEY, undefined)).toBeUndefined();
    expect(byId.after(APP_KEY, '')).toBeUndefined();
    expect(byId.after(APP_KEY, byId.cursorAfter(APP_KEY, [42]))).toEqual([42]);
    refused(() => byId.after(APP_KEY, encodeCursor(APP_KEY, 'invitees', [42])));
    for (const bad of [[0], [-1], [1.5], ['1'], [1, 2], []]) refused(() => byId.after(APP_KEY, encodeCursor(APP_KEY, 'rsvps', bad as number[])));
    const rowsListing = new Listing<Row>('events', isRow);
    expect(rowsListing.after(APP_KEY, ROW_CURSOR)).toEqual(['2026-07-14T17:00:00.000Z', 42]);
  });
});
