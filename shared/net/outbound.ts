import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Requests to addresses a user chose (webhook endpoints). Only public unicast addresses are
 * reached: loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade
 * NAT, multicast, reserved and the like are refused, checked on the address actually
 * connected to (each DNS answer, at connect time: a name that resolved to a public address
 * when the webhook was saved and to a private one now is refused now). Networks listed in
 * a setting are let through (development, tests). Redirects are never followed.
 */
type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];

export class BlockedAddressError extends Error {
  readonly code = 'EADDRBLOCKED';
  constructor(address: string) {
    super(`the address ${address} is not a public one`);
    this.name = 'BlockedAddressError';
  }
}

/** Networks from a comma-separated list of CIDR ranges or addresses; throws on a bad entry. */
export function parseNetworks(list: string): Network[] {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => (entry.includes('/') ? ipaddr.parseCIDR(entry) : (() => {
      const ip = ipaddr.parse(entry);
      return [ip, ip.kind() === 'ipv4' ? 32 : 128] as Network;
    })()));
}

/** Whether a connection to this address may be made. */
export function isAllowedAddress(address: string, allowed: Network[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (allowed.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return true;
  return ip.range() === 'unicast';
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
  headers: http.IncomingHttpHeaders;
  /** The start of the answer's body, at most `keepBytes`. */
  body: string;
}

const agents = { 'http:': new http.Agent({ keepAlive: true, maxSockets: 16 }), 'https:': new https.Agent({ keepAlive: true, maxSockets: 16 }) };

/**
 * POSTs `body` to `url` and answers the status, headers and the start of the body; throws
 * on a refused address, a connection error or the timeout (the whole exchange). Redirects
 * come back as they are (3xx).
 */
export function postGuarded(
  url: URL,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allowed: Network[]; keepBytes: number },
): Promise<OutboundAnswer> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !isAllowedAddress(host, opts.allowed)) {
      reject(new BlockedAddressError(host));
      return;
    }
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      agent: agents[url.protocol as 'http:' | 'https:'],
      lookup: guardedLookup(opts.allowed),
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res) => {
      let kept = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        if (kept.length < opts.keepBytes) kept = Buffer.concat([kept, chunk.subarray(0, opts.keepBytes - kept.length)]);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: kept.toString('utf8') });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    req.end(body);
  });
}
