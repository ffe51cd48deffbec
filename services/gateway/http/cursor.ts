import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { validationFailed } from '../../../shared/errors/app-error';

/**
 * The one keyset cursor of every listing (`meta.next_cursor`). A cursor holds the sort key
 * of the last row a page showed (a row id among them), so it is encrypted and authenticated
 * (AES-256-GCM under a key derived from APP_KEY): a client cannot read the ids, which are
 * counters shared by every team and would tell the platform's volume, nor forge a key that
 * reaches Postgres in a type it refuses. A cursor names its listing: one listing's cursor is
 * refused by another. Anything that does not decrypt, or whose values are not what the
 * listing's check expects, is a 422 on `cursor`.
 */
type CursorValue = string | number;

/** The cursor key, derived from APP_KEY once (a derivation costs more than the cipher). */
const keys = new Map<string, Buffer>();
const keyOf = (appKey: string): Buffer => {
  let key = keys.get(appKey);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', appKey, 'calendar-service', 'list cursor', 32));
    keys.set(appKey, key);
  }
  return key;
};

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function encodeCursor(appKey: string, listing: string, values: CursorValue[]): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(appKey), iv);
  cipher.setAAD(Buffer.from(listing));
  const body = Buffer.concat([cipher.update(JSON.stringify(values), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

const invalid = () => validationFailed({ cursor: ['The cursor field is invalid.'] });

/** The values `encodeCursor` wrapped for this listing, once `check` accepts them; else a 422. */
export function decodeCursor<T extends CursorValue[]>(appKey: string, listing: string, cursor: string, check: (values: unknown[]) => values is T): T {
  const raw = Buffer.from(cursor, 'base64url');
  let values: unknown;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(appKey), raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(listing));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    // A cursor too short for an IV, a tag and a body has no body, and "" is no JSON.
    values = JSON.parse(Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8'));
  } catch {
    // Not a cursor of ours for this listing: refused below like any other.
  }
  if (!Array.isArray(values) || !check(values)) throw invalid();
  return values;
}

/** A row id as a cursor holds it. */
export const isRowId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

/**
 * One keyset-paged listing: its name (which its cursors carry) and the check of the key a
 * cursor holds. Every listing fetches one row more than the page (`fetchLimit`), and `page`
 * tells from that row whether there is a next page and makes its cursor from the last row
 * shown.
 */
export class Listing<K extends CursorValue[]> {
  constructor(
    readonly name: string,
    private readonly check: (values: unknown[]) => values is K,
  ) {}

  /** The key the requested page starts after: none for the first page, else the cursor's (a 422 if it is not one of this listing's). */
  after(appKey: string, cursor: string | undefined): K | undefined {
    return cursor ? decodeCursor(appKey, this.name, cursor, this.check) : undefined;
  }

  /** How many rows to fetch for a page of `perPage`: one more, to know whether another page follows. */
  fetchLimit(perPage: number): number {
    return perPage + 1;
  }

  /** The page out of rows fetched with `fetchLimit(perPage)`, and the next page's cursor (null on the last page). */
  page<R>(appKey: string, rows: R[], perPage: number, keyOf: (last: R) => K): { rows: R[]; nextCursor: string | null } {
    if (rows.length <= perPage) return { rows, nextCursor: null };
    const shown = rows.slice(0, perPage);
    return { rows: shown, nextCursor: this.cursorAfter(appKey, keyOf(shown[shown.length - 1])) };
  }

  /** The cursor of the page that starts after this key. */
  cursorAfter(appKey: string, key: K): string {
    return encodeCursor(appKey, this.name, key);
  }
}

/** A listing keyed by row id alone (newest or oldest first). */
export const idListing = (name: string) => new Listing<[number]>(name, (v): v is [number] => v.length === 1 && isRowId(v[0]));
