import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { clientAddress, limitAddress, type TrustProxy } from '../../services/gateway/http/client-address';

/*
 * The client's address and the key a per-address limit counts it under, checked against
 * answers from outside our code: Express's own req.ip (proxy-addr) for the address, and
 * the WHATWG URL parser, ipaddr.js and node's net.isIP for what an address is. The spellings are RFC 4291 2.2's
 * (full, leading zeros dropped, `::`, a trailing dotted quad, either case), RFC 5952 6's
 * `[address]:port`, and RFC 4007's zone index: each must key the same client.
 */
const options = { seed: 20_261_127, numRuns: 300 };

/** A request as the ingest path sees it: only its socket's peer and its headers. */
const request = (remoteAddress: string | undefined, forwarded?: string) =>
  ({ socket: { remoteAddress }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

describe('clientAddress', () => {
  const settings: (boolean | number | string)[] = [false, true, 0, 1, 2, 3, 'loopback', '10.0.0.0/8', '127.0.0.1, 10.0.0.1', 'uniquelocal, 203.0.113.9'];
  const hop = fc.constantFrom('203.0.113.9', '198.51.100.7', '10.0.0.1', '10.1.2.3', '127.0.0.1', '2001:db8::1', 'fc00::1', 'not-an-address', '');
  const header = fc.oneof(
    fc.constant(undefined),
    fc.array(fc.tuple(hop, fc.constantFrom('', ' ', '  ')), { maxLength: 5 }).map((hops) => hops.map(([h, pad]) => pad + h + pad).join(',')),
  );

  it.each(settings)('is the address Express gives as req.ip, trust proxy %p', (trust) => {
    const app = express();
    app.set('trust proxy', trust);
    const trustFn = app.get('trust proxy fn') as TrustProxy;
    fc.assert(
      fc.property(fc.constantFrom('127.0.0.1', '10.0.0.2', '203.0.113.1', '::1', '::ffff:10.0.0.3'), header, (socket, forwarded) => {
        const req = request(socket, forwarded);
        const expressReq = Object.create(app.request, { socket: { value: req.socket }, headers: { value: req.headers } }) as express.Request;
        expect(clientAddress(req, trustFn)).toBe(expressReq.ip);
      }),
      options,
    );
  });

  it('is a fixed key when the socket has no address (closed before it was read)', () => {
    const all = () => true;
    expect(clientAddress(request(undefined), all)).toBe('unknown');
    expect(clientAddress(request(undefined, ''), all)).toBe('unknown');
    expect(clientAddress(request(undefined, '203.0.113.9'), all)).toBe('203.0.113.9');
  });
});

/**
 * The key an address should have, read by code other than ours: the WHATWG URL parser
 * writes the IPv6 address in hex groups (ipaddr.js reads `::1.2.3.4` as IPv4-mapped,
 * which RFC 4291 2.5.5.1 says it is not), then ipaddr.js tells the IPv4 address, or the /64.
 */
function expectedKey(address: string): string {
  const parsed = ipaddr.parse(isIP(address) === 6 ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an address, as RFC 4291 2.2 lets one write them. */
const group = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(1, 0xffff, 0xdb8));
const groups = fc.oneof(
  fc.array(group, { minLength: 8, maxLength: 8 }),
  // IPv4-mapped (RFC 4291 2.5.5.2) and its near misses.
  fc.tuple(fc.constantFrom([0, 0, 0, 0, 0, 0xffff], [0, 0, 0, 0, 0xffff, 0], [0, 0, 0, 0, 0, 0xfffe], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0xffff], [0x64, 0xff9b, 0, 0, 0, 0]), group, group).map(([head, a, b]) => [...head, a, b]),
);

interface Spelling {
  /** Leading zeros kept to four digits. */
  padded: boolean;
  upper: boolean;
  /** The last two groups as a dotted quad. */
  quad: boolean;
  /** Which run of zero groups `::` stands for (an index into the runs found), if any. */
  compress: number | null;
}

function spell(g: number[], s: Spelling): string {
  const hex = (n: number) => (s.padded ? n.toString(16).padStart(4, '0') : n.toString(16));
  const words = s.quad ? g.slice(0, 6).map(hex) : g.map(hex);
  const tail = s.quad ? `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}` : null;
  const runs: [number, number][] = [];
  for (let i = 0; i < words.length; i++) {
    if (g[i] !== 0) continue;
    let j = i;
    while (j < words.length && g[j] === 0) j++;
    runs.push([i, j]);
    i = j;
  }
  let text: string;
  if (s.compress === null || runs.length === 0) {
    text = [...words, ...(tail ? [tail] : [])].join(':');
  } else {
    const [from, to] = runs[s.compress % runs.length];
    const left = words.slice(0, from).join(':');
    const right = [...words.slice(to), ...(tail ? [tail] : [])].join(':');
    text = `${left}::${right}`;
  }
  return s.upper ? text.toUpperCase() : text;
}

const spelling = fc.record({ padded: fc.boolean(), upper: fc.boolean(), quad: fc.boolean(), compress: fc.option(fc.nat(3)) });

describe('the address a per-address limit counts', () => {
  it("is ipaddr.js's address, or its /64, for any spelling of an IPv6 address (RFC 4291 2.2)", () => {
    fc.assert(
      fc.property(groups, spelling, spelling, (g, a, b) => {
        const one = spell(g, a);
        const other = spell(g, b);
        expect(isIP(one)).toBe(6);
        expect([one, limitAddress(one)]).toEqual([one, expectedKey(one)]);
        expect([other, limitAddress(other)]).toEqual([other, limitAddress(one)]);
      }),
      options,
    );
  });

  it('is the same key however a proxy wrote the address beside it: brackets, a port, a zone, spaces', () => {
    const around = fc.constantFrom(
      (a: string) => `[${a}]`,
      (a: string) => `[${a}]:443`,
      (a: string) => `[${a}]:1`,
      (a: string) => `${a}%eth0`,
      (a: string) => `[${a}%25en1]:8080`,
      (a: string) => ` ${a} `,
      (a: string) => `\t${a}`,
      (a: string) => `${a}\n`,
    );
    fc.assert(
      fc.property(groups, spelling, around, (g, s, wrap) => {
        const address = spell(g, s);
        expect([wrap(address), limitAddress(wrap(address))]).toEqual([wrap(address), expectedKey(address)]);
      }),
      options,
    );
  });

  it('keys apart the /64s that differ, and together the addresses of one /64', () => {
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), fc.nat(7), fc.integer({ min: 1, max: 0xffff }), (g, at, delta) => {
        fc.pre(g.slice(0, 6).join(':') !== '0:0:0:0:0:65535');
        const changed = [...g];
        changed[at] = (g[at] + delta) & 0xffff;
        fc.pre(changed.slice(0, 6).join(':') !== '0:0:0:0:0:65535');
        const a = limitAddress(spell(g, { padded: false, upper: false, quad: false, compress: 0 }));
        const b = limitAddress(spell(changed, { padded: false, upper: false, quad: false, compress: 0 }));
        expect(a === b).toBe(at >= 4);
      }),
      options,
    );
  });

  it('keys an IPv4 address as itself, with or without a port (RFC 4291 2.5.5.2 for the mapped forms)', () => {
    const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));
    fc.assert(
      fc.property(v4, fc.integer({ min: 0, max: 65535 }), (ip, port) => {
        for (const spelled of [ip, `${ip}:${port}`, ` ${ip}`, `${ip} `, `::ffff:${ip}`, `::FFFF:${ip}`, `0:0:0:0:0:FFFF:${ip}`, `[::ffff:${ip}]:${port}`, `::ffff:${ip}%eth0`]) {
          expect([spelled, limitAddress(spelled)]).toEqual([spelled, ip]);
        }
      }),
      options,
    );
    // RFC 4291 2.2's own examples.
    expect(limitAddress('0:0:0:0:0:FFFF:129.144.52.38')).toBe('129.144.52.38');
    expect(limitAddress('::FFFF:129.144.52.38')).toBe('129.144.52.38');
    expect(limitAddress('::ffff:8190:3426')).toBe('129.144.52.38');
    expect(limitAddress('2001:DB8:0:0:8:800:200C:417A')).toBe('2001:db8:0:0::/64');
    expect(limitAddress('FF01::101')).toBe('ff01:0:0:0::/64');
    expect(limitAddress('::13.1.68.3')).toBe('0:0:0:0::/64');
    expect(limitAddress('::')).toBe('0:0:0:0::/64');
    // RFC 5952 2's spellings of one address.
    for (const same of ['2001:db8:0:0:1:0:0:1', '2001:0db8:0:0:1:0:0:1', '2001:db8::1:0:0:1', '2001:db8::0:1:0:0:1', '2001:0db8::1:0:0:1', '2001:db8:0:0:1::1', '2001:db8:0000:0:1::1', '2001:DB8:0:0:1::1']) {
      expect([same, limitAddress(same)]).toEqual([same, '2001:db8:0:0::/64']);
    }
    // The quad is the last two groups, so it moves the groups before it (7 groups and `::`).
    expect(limitAddress('1::2:3:4:5:1.2.3.4')).toBe('1:0:2:3::/64');
    expect(limitAddress('1:2::3:4:5:1.2.3.4')).toBe('1:2:0:3::/64');
  });

  it('keeps what is not an address as it is, so it never shares a key with one (node net.isIP says which)', () => {
    for (const text of ['not-an-address', 'host.example', 'host.example:80x', '203.0.113.7:', '203.0.113.7:8o', '203.0.113.7:a1', '1.2.3.4:5:6', '::ffff:999.0.0.1', '::ffff:1.2.3', '1.2.3.4.5', ':443', ':', '[', '[2001:db8::1', '2001:db8::g']) {
      expect(isIP(text)).toBe(0);
      expect([text, limitAddress(text)]).toEqual([text, text]);
    }
    // A name and a port is the name (a proxy may write one); a zone alone is dropped.
    expect(limitAddress('host.example:80')).toBe('host.example');
    expect(limitAddress('fe80::1%')).toBe('fe80:0:0:0::/64');
  });

  it('is a fixed key when the request has no address', () => {
    expect(limitAddress(undefined)).toBe('unknown');
    expect(limitAddress('')).toBe('unknown');
  });
});
