import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { trustEntryProblem } from '../config/syntax/trust-proxy.js';
import { clientKey, createClientIpResolver, createTrustTest, parseForwardedEntry } from './client-ip.js';

function req(remoteAddress: string, xff?: string | string[]): IncomingMessage {
  return {
    socket: { remoteAddress },
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  } as unknown as IncomingMessage;
}

describe('trustProxy entries', () => {
  const table = [
    { entry: '10.0.0.1', problem: false },
    { entry: '10.0.0.0/8', problem: false },
    { entry: '::1', problem: false },
    { entry: 'fd00::/8', problem: false },
    { entry: 'loopback', problem: false },
    { entry: 'private', problem: false },
    { entry: 'example.com', problem: true },
    { entry: '10.0.0.0/33', problem: true },
    { entry: 'fd00::/129', problem: true },
    { entry: '10.0.0.0/x', problem: true },
  ];
  for (const c of table) {
    it(`${c.entry} is ${c.problem ? 'rejected' : 'accepted'}`, () => {
      assert.equal(trustEntryProblem(c.entry) !== undefined, c.problem);
    });
  }

  const sets = [
    {
      name: 'matches IPv4 and IPv6 addresses and subnets',
      entries: ['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1'],
      trusted: ['10.200.3.4', '192.168.1.7', 'fd12::1', '::1'],
      untrusted: ['11.0.0.1', '192.168.1.8', 'fe80::1', 'not-an-ip'],
    },
    {
      name: 'expands named sets',
      entries: ['loopback', 'private'],
      trusted: ['127.0.0.1', '::1', '172.20.0.1'],
      untrusted: ['8.8.8.8'],
    },
  ];
  for (const c of sets) {
    it(c.name, () => {
      const trusted = createTrustTest(c.entries);
      for (const address of c.trusted) assert.equal(trusted(address), true, address);
      for (const address of c.untrusted) assert.equal(trusted(address), false, address);
    });
  }
});

describe('X-Forwarded-For entries', () => {
  it('parses addresses with ports and brackets', () => {
    assert.equal(parseForwardedEntry(' 1.2.3.4 '), '1.2.3.4');
    assert.equal(parseForwardedEntry('1.2.3.4:5678'), '1.2.3.4');
    assert.equal(parseForwardedEntry('[2001:db8::1]:443'), '2001:db8::1');
    assert.equal(parseForwardedEntry('2001:db8::1'), '2001:db8::1');
    assert.equal(parseForwardedEntry('::ffff:1.2.3.4'), '1.2.3.4');
    assert.equal(parseForwardedEntry('unknown'), undefined);
    assert.equal(parseForwardedEntry('[::1'), undefined);
  });
});

describe('client IP resolution', () => {
  const cases: { name: string; trust: string[]; answers: [IncomingMessage, string][] }[] = [
    {
      name: 'uses the socket address when no proxy is trusted, whatever X-Forwarded-For says',
      trust: [],
      answers: [
        [req('9.9.9.9', '1.1.1.1'), '9.9.9.9'],
        [req('::ffff:9.9.9.9'), '9.9.9.9'],
      ],
    },
    {
      name: 'ignores X-Forwarded-For from an untrusted peer',
      trust: ['10.0.0.0/8'],
      answers: [[req('9.9.9.9', '1.1.1.1'), '9.9.9.9']],
    },
    {
      name: 'walks from the right past trusted hops to the first untrusted address',
      trust: ['10.0.0.0/8'],
      // client forged 6.6.6.6; real client 1.1.1.1 went through proxies 10.0.0.2 then 10.0.0.1
      answers: [
        [req('10.0.0.1', '6.6.6.6, 1.1.1.1, 10.0.0.2'), '1.1.1.1'],
        [req('::ffff:10.0.0.1', ['6.6.6.6', '1.1.1.1, 10.0.0.2']), '1.1.1.1'],
      ],
    },
    {
      name: 'returns the leftmost hop when every hop is trusted',
      trust: ['10.0.0.0/8'],
      answers: [[req('10.0.0.1', '10.0.0.3, 10.0.0.2'), '10.0.0.3']],
    },
    {
      name: 'stops at the last valid hop on a malformed entry',
      trust: ['10.0.0.0/8'],
      answers: [[req('10.0.0.1', 'garbage, 10.0.0.2'), '10.0.0.2']],
    },
    {
      name: 'uses the trusted peer itself when it sends no X-Forwarded-For',
      trust: ['::1'],
      answers: [
        [req('::1'), '::1'],
        [req('::1', '2001:db8::7'), '2001:db8::7'],
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const ip = createClientIpResolver(c.trust);
      for (const [request, address] of c.answers) assert.equal(ip(request), address);
    });
  }
});

describe('clientKey: the key rate limits count a client under', () => {
  const cases: [address: string, prefix: number, key: string][] = [
    ['198.51.100.7', 64, '198.51.100.7'],
    ['2001:db8:0:1::1', 64, '2001:db8:0:1::/64'],
    ['2001:DB8:0:1:ffff:ffff:ffff:ffff', 64, '2001:db8:0:1::/64'],
    ['2001:db8::1', 64, '2001:db8:0:0::/64'],
    ['::1', 64, '0:0:0:0::/64'],
    ['2001:db8:abcd:12ff::1', 56, '2001:db8:abcd:1200::/56'],
    ['2001:db8:abcd:12ff::1', 48, '2001:db8:abcd::/48'],
    ['64:ff9b::198.51.100.7', 96, '64:ff9b:0:0:0:0::/96'],
    ['fe80::1%eth0', 64, 'fe80:0:0:0::/64'],
    ['2001:db8:0:1::1', 128, '2001:db8:0:1::1'],
  ];
  for (const [address, prefix, key] of cases)
    it(`${address} /${prefix} is ${key}`, () => assert.equal(clientKey(address, prefix), key));
});
