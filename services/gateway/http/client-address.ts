import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';

/** Express's compiled `trust proxy` setting (`app.get('trust proxy fn')`): is the address at this hop a proxy we trust? */
export type TrustProxy = (address: string, hop: number) => boolean;

/**
 * The client's address for a request Express does not see (the smart-link ingest path), as
 * Express's `req.ip` finds it with the same `TRUST_PROXY` setting: the socket's peer, then
 * `X-Forwarded-For` from the nearest hop outwards while each hop is a trusted proxy.
 */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  const socket = req.socket.remoteAddress ?? 'unknown';
  const header = req.headers['x-forwarded-for'];
  if (typeof header !== 'string' || !header) return socket;
  const addresses = [socket];
  const hops = header.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i].trim();
    if (hop) addresses.push(hop);
  }
  for (let i = 0; i < addresses.length - 1; i++) if (!trust(addresses[i], i)) return addresses[i];
  return addresses[addresses.length - 1];
}

/**
 * The address a per-address limit counts against. An IPv4 address is itself (also when it
 * arrives IPv4-mapped, however that is written: `::ffff:192.0.2.1`, `0:0:0:0:0:FFFF:192.0.2.1`,
 * `::ffff:c000:201`); an IPv6 address stands for its /64, since one subscriber commonly gets
 * a whole /64 and could otherwise take a fresh count per address.
 */
export function limitAddress(raw: string | undefined): string {
  if (!raw) return 'unknown';
  const ip = withoutPort(raw.trim());
  const zoneIndex = ip.indexOf('%');
  const address = zoneIndex === -1 ? ip : ip.slice(0, zoneIndex); // a zone index (fe80::1%eth0) is no part of the address
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 6).join(':') === '0:0:0:0:0:ffff') {
    const [high, low] = groups.slice(6).map((g) => parseInt(g, 16));
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/**
 * The address alone, however a proxy wrote it: some append the client's port
 * (`203.0.113.5:41234`) or bracket an IPv6 address (`[2001:db8::1]`, `[2001:db8::1]:443`).
 * Left as they are, one client would be counted as many (a port per connection).
 */
function withoutPort(ip: string): string {
  if (ip.startsWith('[')) {
    const end = ip.indexOf(']');
    return end === -1 ? ip : ip.slice(1, end);
  }
  const colon = ip.indexOf(':');
  // Only digits after the first colon: an IPv4 address (or a name) and a port. An IPv6
  // address has another colon after it, so is left whole.
  if (colon > 0 && /^\d+$/.test(ip.slice(colon + 1))) return ip.slice(0, colon);
  return ip;
}

/** The eight 16-bit groups of a valid IPv6 address, in lower-case hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  let text = address;
  // A trailing dotted quad (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is the last two groups.
  const quad = /(?<![\d.])(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // Without `::` the eight groups are all there, and nothing is filled in.
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => parseInt(g, 16).toString(16));
}
