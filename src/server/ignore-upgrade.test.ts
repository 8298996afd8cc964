import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { headWithoutUpgrade } from './ignore-upgrade.js';
import { rawHeaderList } from '../../test/support/raw-headers.js';

const req = (rawHeaders: string[], method = 'GET', httpVersion = '1.1') => ({
  method,
  url: '/api/a?x=%20y',
  httpVersion,
  rawHeaders,
});

describe('headWithoutUpgrade', () => {
  it('removes Upgrade and the upgrade token of Connection, keeping every other header as sent', () => {
    const head = headWithoutUpgrade(
      req(
        rawHeaderList(`
          Host: gw:8080
          Connection: Upgrade, HTTP2-Settings
          Upgrade: h2c
          HTTP2-Settings: AAMAAABk
          Content-Length: 5
          X-Two: a
          X-Two: b
        `),
        'POST',
      ),
    );
    assert.equal(
      head,
      'POST /api/a?x=%20y HTTP/1.1\r\nHost: gw:8080\r\nConnection: HTTP2-Settings\r\nHTTP2-Settings: AAMAAABk\r\nContent-Length: 5\r\nX-Two: a\r\nX-Two: b\r\n\r\n',
    );
  });

  it('drops a Connection header left empty, and every Upgrade header', () => {
    const head = headWithoutUpgrade(
      req(
        ['host', 'gw', 'connection', 'upgrade', 'upgrade', 'websocket', 'Upgrade', 'h2c', 'sec-websocket-key', 'k'],
        'GET',
        '1.0',
      ),
    );
    assert.equal(head, 'GET /api/a?x=%20y HTTP/1.0\r\nhost: gw\r\nsec-websocket-key: k\r\n\r\n');
  });

  it('leaves a Connection header without the upgrade token as sent', () => {
    assert.match(
      headWithoutUpgrade(req(['Connection', 'keep-alive,x-upgraded', 'Connection', 'Upgrade', 'Upgrade', 'h2c'])),
      /\r\nConnection: keep-alive,x-upgraded\r\n\r\n$/,
    );
  });

  it('keeps keep-alive and close tokens', () => {
    assert.match(
      headWithoutUpgrade(req(['Connection', 'keep-alive, Upgrade', 'Upgrade', 'h2c'])),
      /\r\nConnection: keep-alive\r\n\r\n$/,
    );
    assert.match(
      headWithoutUpgrade(req(['Connection', 'Upgrade,close', 'Upgrade', 'h2c'])),
      /\r\nConnection: close\r\n\r\n$/,
    );
  });
});
