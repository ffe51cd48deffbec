import { type CalendarRow, type EventWithCalendar } from '../../../shared/events/event-rows';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants as zlib, createBrotliCompress, createGunzip, createGzip } from 'node:zlib';
import type { Request, Response } from 'express';
import { pgTimestampToMillis } from '../../../shared/calendar/dates';
import { ICS_END, icsEvents, icsHead, type IcsOptions } from '../../../shared/calendar/ics';
import { toIcsEvent } from '../../../shared/calendar/event-view';
import { descriptionsOf, feedWindow, type FeedEvent, findEventTrace, lastOffFeedChange } from '../events/events.repository';
import { UID_PATTERN } from '../../../shared/ids/ids';
import { contentDisposition, type FileNames, titleFileNames } from '../http/content-disposition';
import type { AppContext } from '../context';
import { eventView, type PublicDeps, viewOf } from './public.service';
import type { EventView } from '../../../shared/calendar/event-view';

type FeedDeps = PublicDeps & Pick<AppContext, 'httpMetrics'>;

/**
 * What a calendar's feed holds: the events going on or to come, and those that ended in the
 * last `pastDays` days, at most `maxEvents` in all (upcoming ones first). Calendar apps
 * poll a subscribed feed every few hours (Outlook) to once a day (Google) and fetch it
 * whole each time, so a feed stays small enough to fetch and parse on a phone (the sizes
 * bench/scale measures are in docs/public-pages.md and bench/RESULTS.md). Each calendar may
 * set its own window up to the maximums; the whole history stays in the events API.
 */
export const FEED_WINDOW = {
  pastDays: { default: 30, max: 366 },
  maxEvents: { default: 1000, max: 5000 },
} as const;

/** Events read and written per step of a build. */
const BATCH = 250;

/** How often subscribed calendar apps are asked to refresh. */
const FEED_REFRESH_MINUTES = 60;
const DAY_MS = 86_400_000;

export interface Feed {
  /** Whose it is: the team and calendar its fetches are counted under. */
  teamId: number;
  calendarId: number;
  /** File names for Content-Disposition, from the calendar's name. */
  fileNames: FileNames;
  /** The ICS text compressed, in the chunks it was built in: no one string of the whole feed. */
  gzip: Buffer[];
  br: Buffer[];
  /** Bytes of the ICS text itself. */
  size: number;
  /** Strong validator derived from the content, so every gateway computes the same one. */
  etag: string;
  lastModifiedMs: number;
}

/** What a cached feed costs in memory. */
export const feedBytes = (feed: Feed) => [...feed.gzip, ...feed.br].reduce((n, b) => n + b.length, 0);

const collect = (stream: Readable) => {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { chunks, done: once(stream, 'end') };
};

async function write(stream: Writable, data: Buffer): Promise<void> {
  if (!stream.write(data)) await once(stream, 'drain');
}

/** The ICS text, written in parts into gzip and brotli at once, and its validator. */
interface Compressed {
  gzip: Buffer[];
  br: Buffer[];
  size: number;
  etag: string;
}

/**
 * Compresses what `write` appends, part by part: no one string of the whole text is kept.
 * Every feed is made through here, so each is kept and sent the same way.
 */
async function compressed(writeText: (append: (text: string) => Promise<void>) => Promise<void>): Promise<Compressed> {
  const gzip = createGzip();
  const br = createBrotliCompress({ params: { [zlib.BROTLI_PARAM_QUALITY]: 5 } });
  const outputs = [collect(gzip), collect(br)];
  const hash = createHash('sha1');
  let size = 0;
  const append = async (text: string) => {
    const data = Buffer.from(text);
    hash.update(data);
    size += data.length;
    await Promise.all([write(gzip, data), write(br, data)]);
  };
  try {
    await writeText(append);
    gzip.end();
    br.end();
    await Promise.all(outputs.map((o) => o.done));
  } catch (err) {
    gzip.destroy();
    br.destroy();
    throw err;
  }
  return { gzip: outputs[0].chunks, br: outputs[1].chunks, size, etag: hash.digest('base64url') };
}

/**
 * Builds the feed: the window's events read from Postgres, their descriptions batch by
 * batch, each batch written as ICS into gzip and brotli at once. The event loop is free
 * between batches, and what is kept is the compressed feed.
 */
async function buildFeed(deps: FeedDeps, calendar: CalendarRow): Promise<Feed> {
  const now = deps.clock.now().getTime();
  const pastDays = calendar.feed_past_days ?? FEED_WINDOW.pastDays.default;
  const window = {
    now: new Date(now).toISOString(),
    pastFrom: new Date(now - pastDays * DAY_MS).toISOString(),
    limit: calendar.feed_max_events ?? FEED_WINDOW.maxEvents.default,
  };
  const [events, lastChange] = await Promise.all([feedWindow(deps.db, calendar.id, window), lastOffFeedChange(deps.db, calendar.id)]);
  const base = deps.config.publicBaseUrl;
  const opts: IcsOptions = { uidHost: new URL(base).host, calendarName: calendar.name, refreshMinutes: FEED_REFRESH_MINUTES };
  const icsOf = (event: FeedEvent, description: string | null) => toIcsEvent(eventView({ event: { ...event, description }, calendar } as EventWithCalendar, base));

  const body = await compressed(async (append) => {
    await append(icsHead(events.map((event) => icsOf(event, null)), opts));
    for (let i = 0; i < events.length; i += BATCH) {
      const batch = events.slice(i, i + BATCH);
      const descriptions = await descriptionsOf(deps.db, batch.map((e) => e.id));
      await append(icsEvents(batch.map((event) => icsOf(event, descriptions.get(event.id) ?? null)), opts));
    }
    await append(ICS_END);
  });
  // An event leaving the feed changes it too, not only those in it.
  const lastModifiedMs = Math.max(
    pgTimestampToMillis(calendar.updated_at),
    lastChange ? pgTimestampToMillis(lastChange) : 0,
    ...events.map((r) => pgTimestampToMillis(r.updated_at)),
  );
  deps.httpMetrics.feedBuilt();
  return { teamId: calendar.team_id, calendarId: calendar.id, fileNames: titleFileNames(calendar.name, 'ics'), ...body, lastModifiedMs: Math.floor(lastModifiedMs / 1000) * 1000 };
}

/**
 * One event's own feed (`/e/{uid}.ics`), which a calendar app subscribes to so that the
 * event's changes reach it: the event as in its .ics file, named after it, refreshed as
 * calendar feeds are. `event` null is an event that is gone (deleted, or no longer
 * published): the feed is then empty, which makes every app that mirrors it drop the event
 * (a STATUS:CANCELLED copy would be kept and shown, struck through or not, by some).
 */
export function eventFeed(deps: Pick<PublicDeps, 'config'>, found: EventWithCalendar | { teamId: number; calendarId: number; title: string; updatedMs: number }): Promise<Feed> {
  if (!('event' in found)) return buildEventFeed(deps, { ...found, view: null });
  // Kept with the cached event object: a changed event is a new object, so a new feed.
  let feed = eventFeeds.get(found);
  if (!feed) {
    const view = viewOf(found, deps.config.publicBaseUrl);
    feed = buildEventFeed(deps, { teamId: found.calendar.team_id, calendarId: found.calendar.id, title: view.title, updatedMs: view.updatedMs, view });
    eventFeeds.set(found, feed);
    feed.catch(() => eventFeeds.delete(found));
  }
  return feed;
}

const eventFeeds = new WeakMap<EventWithCalendar, Promise<Feed>>();

async function buildEventFeed(
  deps: Pick<PublicDeps, 'config'>,
  found: { teamId: number; calendarId: number; title: string; updatedMs: number; view: EventView | null },
): Promise<Feed> {
  const opts: IcsOptions = { uidHost: new URL(deps.config.publicBaseUrl).host, calendarName: found.title, refreshMinutes: FEED_REFRESH_MINUTES };
  const events = found.view ? [toIcsEvent(found.view)] : [];
  const body = await compressed(async (append) => {
    await append(icsHead(events, opts));
    await append(icsEvents(events, opts));
    await append(ICS_END);
  });
  return { teamId: found.teamId, calendarId: found.calendarId, fileNames: titleFileNames(found.title, 'ics'), ...body, lastModifiedMs: Math.floor(found.updatedMs / 1000) * 1000 };
}

/**
 * A calendar's ICS feed. Built once and kept, compressed, in the feed cache until an event
 * of the calendar (or the calendar) changes, so a conditional request is answered with a
 * 304 without touching Postgres; requests that come while it is built share that build.
 */
export async function calendarFeed(deps: FeedDeps, calendar: CalendarRow): Promise<Feed> {
  return deps.caches.feeds.load(calendar.uid, () => buildFeed(deps, calendar));
}

/** The ETag of each encoding of a feed: the same content, so a validator of any of them matches. */
const ENCODINGS = { identity: '', gzip: '-gz', br: '-br' } as const;
const etagOf = (feed: Feed, encoding: keyof typeof ENCODINGS) => `"${feed.etag}${ENCODINGS[encoding]}"`;

/** True when the request's validators show the client already has this feed. */
function notModified(feed: Feed, ifNoneMatch: string | undefined, ifModifiedSince: string | undefined): boolean {
  if (ifNoneMatch) {
    const tags = (Object.keys(ENCODINGS) as Array<keyof typeof ENCODINGS>).map((e) => etagOf(feed, e));
    return ifNoneMatch.split(',').some((tag) => tags.includes(tag.trim().replace(/^W\//, '')) || tag.trim() === '*');
  }
  if (ifModifiedSince) {
    const since = Date.parse(ifModifiedSince);
    return !Number.isNaN(since) && feed.lastModifiedMs <= since;
  }
  return false;
}

/**
 * Answers with the feed: 304 when the client has it, else the compressed feed as the
 * client accepts it (br or gzip, as it was cached), or the text, decompressed as it is sent.
 */
export async function sendFeed(req: Request, res: Response, feed: Feed, cacheControl: string): Promise<void> {
  const encoding = (req.acceptsEncodings('br', 'gzip', 'identity') || 'identity') as keyof typeof ENCODINGS;
  res.set({ ETag: etagOf(feed, encoding), 'Last-Modified': new Date(feed.lastModifiedMs).toUTCString(), 'Cache-Control': cacheControl, Vary: 'Accept-Encoding' });
  if (notModified(feed, req.headers['if-none-match'], req.headers['if-modified-since'])) {
    res.status(304).end();
    return;
  }
  res.status(200).type('text/calendar; charset=utf-8').set('Content-Disposition', contentDisposition('inline', feed.fileNames));
  if (encoding === 'identity') {
    res.set('Content-Length', String(feed.size));
    await streamed(pipeline(Readable.from(feed.gzip), createGunzip(), res));
    return;
  }
  const chunks = feed[encoding];
  res.set({ 'Content-Encoding': encoding, 'Content-Length': String(chunks.reduce((n, b) => n + b.length, 0)) });
  await streamed(pipeline(Readable.from(chunks), res));
}

/** A client that goes away while its feed is sent is no error of ours. */
async function streamed(sending: Promise<void>): Promise<void> {
  try {
    await sending;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
  }
}

/**
 * The feed of an event that is no longer published (deleted, back to draft, rejected): a
 * feed without it, so that every app that mirrors the event's feed drops it. Undefined for
 * a uid no event ever had.
 */
export async function goneEventFeed(deps: Pick<PublicDeps, 'db' | 'config'>, uid: string): Promise<Feed | undefined> {
  const trace = UID_PATTERN.test(uid) ? await findEventTrace(deps.db, uid) : undefined;
  if (!trace) return undefined;
  return eventFeed(deps, { teamId: trace.team_id, calendarId: trace.calendar_id, title: trace.title, updatedMs: pgTimestampToMillis(trace.updated_at) });
}
