import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { isAllowedAddress, type Network } from '../../shared/net/networks';

/**
 * Requests to addresses a user chose (webhook endpoints). Only public unicast addresses are
 * reached: loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade
 * NAT, multicast, reserved and the like are refused, checked on the address actually
 * connected to (each DNS answer, at connect time: a name that resolved to a public address
 * when the webhook was saved and to a private one now is refused now). Networks listed in
 * a setting are let through (development, tests; networks.ts). Redirects are never followed.
 */

/** A connection refused by that rule: the address is neither public nor let through. */
export class BlockedAddressError extends Error {
  readonly code = 'EADDRBLOCKED';
  constructor(address: string) {
    super(`the address ${address} is not a public one`);
    this.name = 'BlockedAddressError';
  }
}

/** dns.lookup for a request: every address a name resolves to must be allowed. */
function guardedLookup(allowed: Network[]): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      const blocked = list.find((a) => !isAllowedAddress(a.address, allowed));
      if (blocked || !list.length) return callback(new BlockedAddressError(blocked?.address ?? hostname), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}

interface OutboundAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The start of the answer's body, at most `keepBytes`. */
  body: string;
}

/**
 * Connections per origin (scheme, host, port), per set of allowed networks: requests beyond
 * them wait in the pool. Callers keep to it (the webhook worker's places per origin).
 */
export const CONNECTIONS_PER_ORIGIN = 16;
const agents = new Map<string, Agent>();

/**
 * The connection pools of one set of allowed networks (a worker has one). undici's client:
 * it costs half the CPU of node:http's per request, and a webhook worker's cycles go mostly
 * to its requests. Kept-alive connections are reused; each new one looks its name up again
 * through the guard.
 */
function agentFor(allowed: Network[]): Agent {
  const key = allowed.map(([net, bits]) => `${net.toString()}/${bits}`).join(',');
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ connections: CONNECTIONS_PER_ORIGIN, connect: { lookup: guardedLookup(allowed) } });
    agents.set(key, agent);
  }
  return agent;
}

/**
 * POSTs `body` to `url` and answers the status, headers and the start of the body; throws
 * on a refused address, a connection error or the timeout (the whole exchange). Redirects
 * come back as they are (3xx).
 */
export async function postGuarded(
  url: URL,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allowed: Network[]; keepBytes: number },
): Promise<OutboundAnswer> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !isAllowedAddress(host, opts.allowed)) throw new BlockedAddressError(host);
  // A timer of our own, cleared when done: AbortSignal.timeout() costs several times more
  // per request (a weakly held timer), and a worker makes thousands of requests a second.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new Error('timeout')), opts.timeoutMs);
  try {
    const answer = await agentFor(opts.allowed).request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers,
      body,
      signal: timeout.signal,
    });
    // Read to its end (the connection is then reused), keeping the start.
    const kept: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      if (size < opts.keepBytes) kept.push(chunk.subarray(0, opts.keepBytes - size));
      size += chunk.length;
    }
    return { status: answer.statusCode, headers: answer.headers, body: Buffer.concat(kept).toString('utf8') };
  } catch (err) {
    if (timeout.signal.aborted) throw new Error(`no answer within ${opts.timeoutMs} ms`, { cause: err });
    throw (err as { cause?: unknown }).cause instanceof BlockedAddressError ? (err as { cause: BlockedAddressError }).cause : err;
  } finally {
    clearTimeout(timer);
  }
}
