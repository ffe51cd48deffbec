import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { clientAddress, limitAddress, type TrustProxy } from '../../services/gateway/http/client-address';

/**
 * The ingest path runs beside Express, so it finds the client's address itself: it must be
 * the address Express's req.ip gives the rest of the gateway, for every TRUST_PROXY form.
 */
describe('clientAddress', () => {
  it.each<[string, boolean | number | string]>([
    ['no proxy trusted', false],
    ['one hop', 1],
    ['two hops', 2],
    ['loopback', 'loopback'],
    ['a list of addresses', '127.0.0.1, 10.0.0.1'],
    ['every proxy', true],
  ])('agrees with req.ip: %s', async (_name, trust) => {
    const app = express();
    app.set('trust proxy', trust);
    app.get('/', (req, res) => {
      res.json({ express: req.ip, ours: clientAddress(req, app.get('trust proxy fn') as TrustProxy) });
    });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      for (const forwarded of [undefined, '', '203.0.113.9', '198.51.100.7, 10.0.0.1', ' 198.51.100.7 ,, 10.0.0.1 , 203.0.113.9 ', 'not-an-address, 10.0.0.1']) {
        const answer = (await fetch(url, { headers: forwarded === undefined ? {} : { 'X-Forwarded-For': forwarded } }).then((r) => r.json())) as { express: string; ours: string };
        expect({ forwarded, ours: answer.ours }).toEqual({ forwarded, ours: answer.express });
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('the address a per-address limit counts', () => {
  it('is an IPv4 address itself, also when it arrives IPv4-mapped', () => {
    expect(limitAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(limitAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(limitAddress('::FFFF:203.0.113.7')).toBe('203.0.113.7');
  });

  it("is an IPv6 address's /64, however the address is written", () => {
    const one = limitAddress('2001:db8:1:2::1');
    expect(one).toBe('2001:db8:1:2::/64');
    for (const same of ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0DB8:0001:0002:0:0:0:9', '2001:db8:1:2:a::b', '2001:db8:1:2::1%eth0', '2001:db8:1:2::1.2.3.4']) {
      expect([same, limitAddress(same)]).toEqual([same, one]);
    }
    expect(limitAddress('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(limitAddress('::1')).toBe('0:0:0:0::/64');
    expect(limitAddress('1::2:3:4:5:6:7')).toBe('1:0:2:3::/64');
    expect(limitAddress('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });

  it('is the address alone when a proxy wrote a port or brackets beside it', () => {
    for (const spelled of ['203.0.113.7:41234', '203.0.113.7:1', ' 203.0.113.7 ', '[::ffff:203.0.113.7]:443']) expect([spelled, limitAddress(spelled)]).toEqual([spelled, '203.0.113.7']);
    for (const spelled of ['[2001:db8:1:2::1]', '[2001:db8:1:2::1]:443', '[2001:DB8:1:2::9]:8080']) expect([spelled, limitAddress(spelled)]).toEqual([spelled, '2001:db8:1:2::/64']);
  });

  it('is a fixed key when the request has no address', () => {
    expect(limitAddress(undefined)).toBe('unknown');
  });
});
