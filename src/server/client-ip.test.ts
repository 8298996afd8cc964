import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { trustEntryProblem } from '../config/syntax/trust-proxy.js';
import { createClientIpResolver, createTrustTest, parseForwardedEntry } from './client-ip.js';

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

  it('matches IPv4 and IPv6 addresses and subnets', () => {
    const trusted = createTrustTest(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1']);
    assert.equal(trusted('10.200.3.4'), true);
    assert.equal(trusted('11.0.0.1'), false);
    assert.equal(trusted('192.168.1.7'), true);
    assert.equal(trusted('192.168.1.8'), false);
    assert.equal(trusted('fd12::1'), true);
    assert.equal(trusted('fe80::1'), false);
    assert.equal(trusted('::1'), true);
    assert.equal(trusted('not-an-ip'), false);
  });

  it('expands named sets', () => {
    const trusted = createTrustTest(['loopback', 'private']);
    assert.equal(trusted('127.0.0.1'), true);
    assert.equal(trusted('::1'), true);
    assert.equal(trusted('172.20.0.1'), true);
    assert.equal(trusted('8.8.8.8'), false);
  });
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
  it('uses the socket address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    const ip = createClientIpResolver([]);
    assert.equal(ip(req('9.9.9.9', '1.1.1.1')), '9.9.9.9');
    assert.equal(ip(req('::ffff:9.9.9.9')), '9.9.9.9');
  });

  it('ignores X-Forwarded-For from an untrusted peer', () => {
    const ip = createClientIpResolver(['10.0.0.0/8']);
    assert.equal(ip(req('9.9.9.9', '1.1.1.1')), '9.9.9.9');
  });

  it('walks from the right past trusted hops to the first untrusted address', () => {
    const ip = createClientIpResolver(['10.0.0.0/8']);
    // client forged 6.6.6.6; real client 1.1.1.1 went through proxies 10.0.0.2 then 10.0.0.1
    assert.equal(ip(req('10.0.0.1', '6.6.6.6, 1.1.1.1, 10.0.0.2')), '1.1.1.1');
    assert.equal(ip(req('::ffff:10.0.0.1', ['6.6.6.6', '1.1.1.1, 10.0.0.2'])), '1.1.1.1');
  });

  it('returns the leftmost hop when every hop is trusted', () => {
    const ip = createClientIpResolver(['10.0.0.0/8']);
    assert.equal(ip(req('10.0.0.1', '10.0.0.3, 10.0.0.2')), '10.0.0.3');
  });

  it('stops at the last valid hop on a malformed entry', () => {
    const ip = createClientIpResolver(['10.0.0.0/8']);
    assert.equal(ip(req('10.0.0.1', 'garbage, 10.0.0.2')), '10.0.0.2');
  });

  it('uses the trusted peer itself when it sends no X-Forwarded-For', () => {
    const ip = createClientIpResolver(['::1']);
    assert.equal(ip(req('::1')), '::1');
    assert.equal(ip(req('::1', '2001:db8::7')), '2001:db8::7');
  });
});
