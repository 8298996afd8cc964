import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { clientRefusal, compileIpRules, ipRulesLayer } from './ip-rules.js';
import { createClientIpResolver } from '../server/client-ip.js';
import { cidrProblem } from '../config/syntax/cidr.js';
import type { CompiledRoute } from '../pipeline/types.js';
import { fakeExchange, fakeUpgradeExchange, neverRuns, recordingNext } from '../../test/support/exchanges.js';

describe('ipRules entries', () => {
  const table: { entry: string; problem?: string }[] = [
    { entry: '10.0.0.0/8' },
    { entry: '10.0.0.7' },
    { entry: '0.0.0.0/0' },
    { entry: '2001:db8::/32' },
    { entry: '::1' },
    { entry: '::/0' },
    { entry: '10.0.0.0/33', problem: '"10.0.0.0/33": prefix length must be 0-32' },
    { entry: '2001:db8::/129', problem: '"2001:db8::/129": prefix length must be 0-128' },
    { entry: '10.0.0.0/', problem: '"10.0.0.0/": prefix length must be 0-32' },
    { entry: '10.0.0.0/8/9', problem: '"10.0.0.0/8/9": prefix length must be 0-32' },
    { entry: '1.2.3', problem: '"1.2.3" is not an IP address or a CIDR (10.0.0.0/8, 2001:db8::/32)' },
    { entry: 'example.com', problem: '"example.com" is not an IP address or a CIDR (10.0.0.0/8, 2001:db8::/32)' },
    { entry: '256.0.0.1/8', problem: '"256.0.0.1/8" is not an IP address or a CIDR (10.0.0.0/8, 2001:db8::/32)' },
  ];
  for (const c of table)
    it(`${c.entry} is ${c.problem === undefined ? 'accepted' : 'rejected'}`, () =>
      assert.equal(cidrProblem(c.entry), c.problem));
});

describe('compileIpRules', () => {
  const cases: { name: string; allow?: string[]; deny?: string[]; refused: string[]; allowed: string[] }[] = [
    {
      name: 'a deny list refuses its ranges and lets everyone else in',
      deny: ['203.0.113.0/24', '198.51.100.7', '2001:db8:bad::/48'],
      refused: ['203.0.113.0', '203.0.113.255', '198.51.100.7', '2001:db8:bad::1', '2001:DB8:BAD:ffff::9'],
      allowed: ['203.0.114.0', '203.0.112.255', '198.51.100.8', '2001:db8:bae::1', '::1'],
    },
    {
      name: 'a non-empty allow list lets in only its ranges',
      allow: ['10.0.0.0/8', '2001:db8::/32'],
      refused: ['11.0.0.1', '9.255.255.255', '2001:db9::1', '::1', ''],
      allowed: ['10.0.0.0', '10.255.255.255', '2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
    },
    {
      name: 'deny wins over allow',
      allow: ['10.0.0.0/8'],
      deny: ['10.1.0.0/16'],
      refused: ['10.1.2.3', '12.0.0.1'],
      allowed: ['10.2.0.1'],
    },
    {
      name: 'an IPv4-mapped IPv6 address is tested as the IPv4 address it is',
      allow: ['192.0.2.0/24'],
      deny: ['192.0.2.66'],
      refused: ['::ffff:192.0.2.66', '::ffff:198.51.100.1'],
      allowed: ['::ffff:192.0.2.1', '192.0.2.1'],
    },
    {
      name: 'a range written IPv4-mapped holds the IPv4 clients it maps',
      deny: ['::ffff:198.51.100.0/120', '::ffff:192.0.2.9'],
      refused: ['198.51.100.20', '::ffff:198.51.100.20', '192.0.2.9'],
      allowed: ['198.51.101.1', '192.0.2.8'],
    },
    {
      name: 'an IPv6 range never holds an IPv4 client, and an IPv4 range no IPv6 client',
      deny: ['::/0'],
      refused: ['2001:db8::1', '::1'],
      allowed: ['192.0.2.1', '::ffff:192.0.2.1'],
    },
    {
      name: '0.0.0.0/0 holds every IPv4 client and no IPv6 client',
      allow: ['0.0.0.0/0'],
      refused: ['2001:db8::1'],
      allowed: ['0.0.0.0', '255.255.255.255', '::ffff:127.0.0.1'],
    },
    {
      name: 'a bare address is one address (/32, /128)',
      deny: ['192.0.2.1', '2001:db8::1'],
      refused: ['192.0.2.1', '2001:db8::1', '2001:db8:0:0:0:0:0:1'],
      allowed: ['192.0.2.0', '192.0.2.2', '2001:db8::2', '2001:db8::'],
    },
    {
      name: 'host bits after the prefix are ignored, as a subnet',
      deny: ['10.0.0.1/8'],
      refused: ['10.200.0.1'],
      allowed: ['11.0.0.1'],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const refuses = compileIpRules({ allow: c.allow ?? [], deny: c.deny ?? [] });
      for (const a of c.refused) assert.equal(refuses(a), true, `${a} refused`);
      for (const a of c.allowed) assert.equal(refuses(a), false, `${a} allowed`);
    });
});

function req(remoteAddress: string, xff?: string): IncomingMessage {
  return {
    socket: { remoteAddress },
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  } as unknown as IncomingMessage;
}

describe('clientRefusal', () => {
  it('tests the client trustProxy finds, not the socket peer of a trusted proxy', () => {
    const refuses = clientRefusal({ allow: [], deny: ['203.0.113.0/24'] }, createClientIpResolver(['10.0.0.0/8']));
    assert.equal(refuses(req('10.0.0.1', '203.0.113.9')), true);
    assert.equal(refuses(req('10.0.0.1', '198.51.100.1')), false);
    // An untrusted peer's X-Forwarded-For is not believed: its own address is tested.
    assert.equal(refuses(req('192.0.2.1', '198.51.100.1, 10.0.0.1')), false);
    assert.equal(refuses(req('203.0.113.5', '198.51.100.1')), true);
    assert.equal(refuses(req('::ffff:203.0.113.5')), true);
  });
});

describe('ipRulesLayer', () => {
  const route = { id: 'GET /a' } as CompiledRoute;

  it('answers 403 GW_IP_FORBIDDEN to a refused client, body unread, and never calls next', async () => {
    const { ex, written, resumed } = fakeExchange(route);
    await ipRulesLayer(() => true)(neverRuns())(ex);
    assert.equal(written.status, 403);
    assert.equal(written.headers['x-portico-error'], 'GW_IP_FORBIDDEN');
    assert.deepEqual(JSON.parse(String(written.body)), { error: 'Client address not allowed', success: false });
    assert.equal(ex.errorCode, 'GW_IP_FORBIDDEN');
    assert.equal(resumed(), 0);
  });

  it('refuses a WebSocket handshake on its socket', async () => {
    const { ex, socket } = fakeUpgradeExchange(route);
    await ipRulesLayer(() => true)(neverRuns())(ex);
    assert.match(socket.text(), /^HTTP\/1\.1 403 /);
  });

  it('hands an allowed client on untouched', async () => {
    const { ex, written } = fakeExchange(route);
    const { next, seen } = recordingNext();
    await ipRulesLayer(() => false)(next)(ex);
    assert.deepEqual(seen, [ex]);
    assert.equal(written.status, undefined);
    assert.equal(ex.errorCode, undefined);
  });
});
