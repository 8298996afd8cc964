import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { GatewaySettingsSchema } from '../config/schema.js';
import { describeMetricsAccess, isLoopbackClient, publicMetricsAccess } from './metrics-access.js';

/** The two fields the rule reads: the socket's peer and the headers. */
const from = (remoteAddress: string | undefined, headers: Record<string, string> = {}) =>
  ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

const settings = (config: unknown) => GatewaySettingsSchema.parse(config);
const TOKEN = 'a-metrics-token-of-some-length';

describe('metrics access: who is a loopback client', () => {
  const cases: [string | undefined, Record<string, string>, boolean][] = [
    ['127.0.0.1', {}, true],
    ['127.10.0.3', {}, true],
    ['::1', {}, true],
    ['::ffff:127.0.0.1', {}, true],
    ['192.0.2.7', {}, false],
    ['::ffff:192.0.2.7', {}, false],
    ['2001:db8::7', {}, false],
    ['::', {}, false],
    [undefined, {}, false],
    ['127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }, false],
    ['127.0.0.1', { forwarded: 'for=127.0.0.1' }, false],
    ['::1', { 'x-real-ip': '::1' }, false],
    ['127.0.0.1', { 'x-forwarded-proto': 'https' }, false],
    ['127.0.0.1', { 'true-client-ip': '203.0.113.9' }, false],
    ['127.0.0.1', { x_forwarded_for: '203.0.113.9' }, false],
    ['127.0.0.1', { 'user-agent': 'Prometheus/2.53', accept: 'text/plain' }, true],
  ];
  for (const [address, headers, expected] of cases)
    it(`${address ?? 'no address'} ${JSON.stringify(headers)}: ${expected}`, () => {
      assert.equal(isLoopbackClient(from(address, headers)), expected);
    });
});

describe('metrics access on the public port', () => {
  it('by default: loopback clients only, others GW_METRICS_NOT_PUBLIC', () => {
    const access = publicMetricsAccess(settings({}).telemetry);
    assert.equal(access(from('127.0.0.1')), undefined);
    assert.equal(access(from('192.0.2.7')), 'GW_METRICS_NOT_PUBLIC');
  });

  it('metricsPublic: every client', () => {
    const access = publicMetricsAccess(settings({ telemetry: { metricsPublic: true } }).telemetry);
    assert.equal(access(from('192.0.2.7')), undefined);
  });

  it('metricsToken: the token from every client, loopback included', () => {
    const access = publicMetricsAccess(settings({ telemetry: { metricsToken: TOKEN } }).telemetry);
    assert.equal(access(from('127.0.0.1')), 'GW_AUTH_MISSING');
    assert.equal(access(from('192.0.2.7', { authorization: `Bearer ${TOKEN}` })), undefined);
  });
});

describe('metrics access as portico check says it', () => {
  const cases: [string, unknown, string][] = [
    [
      'default',
      {},
      'metrics: GET /metrics on the public port (8080) to loopback clients only; other scrapers need config.admin, config.telemetry.metricsToken or config.telemetry.metricsPublic',
    ],
    [
      'admin listener',
      { admin: { port: 9901 } },
      'metrics: GET /metrics on the admin listener (127.0.0.1:9901), and on the public port (8080) to loopback clients only',
    ],
    [
      'token',
      { port: 80, telemetry: { metricsToken: TOKEN } },
      'metrics: GET /metrics on the public port (80) with the bearer token of config.telemetry.metricsToken',
    ],
    [
      'opt-in',
      { telemetry: { metricsPublic: true } },
      'metrics: GET /metrics on the public port (8080) to any client (config.telemetry.metricsPublic)',
    ],
    ['off', { telemetry: { metrics: false } }, 'metrics: off (config.telemetry.metrics: false)'],
  ];
  for (const [name, config, line] of cases)
    it(name, () => {
      assert.equal(describeMetricsAccess(settings(config)), line);
    });
});
