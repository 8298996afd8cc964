import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseService } from './service.js';

describe('parseService: host:port, http://host:port or https://host', () => {
  const ok = [
    { service: 'localhost:3000', key: 'http://localhost:3000', host: 'localhost:3000' },
    { service: 'http://localhost:3000', key: 'http://localhost:3000', host: 'localhost:3000' },
    { service: 'https://api.example', key: 'https://api.example:443', host: 'api.example' },
    { service: 'HTTPS://api.example:8443', key: 'https://api.example:8443', host: 'api.example:8443' },
    { service: 'users', key: 'http://users:80', host: 'users' },
    { service: 'http://[::1]:9000', key: 'http://[::1]:9000', host: '[::1]:9000' },
    { service: 'http://localhost:3000/', key: 'http://localhost:3000', host: 'localhost:3000' },
  ];
  for (const c of ok) {
    it(`accepts ${c.service}`, () => {
      const o = parseService(c.service);
      assert.ok(!('error' in o), JSON.stringify(o));
      assert.equal(o.key, c.key);
      assert.equal(o.hostHeader, c.host);
    });
  }
  const bad = [
    ['ftp://x', 'must use http:// or https://'],
    ['http://x:3000/v1', 'must be a host only'],
    ['http://u:p@x', 'service "http://***@x" must not contain credentials'],
    ['https://svc:s3cr3t@api.internal', 'service "https://***@api.internal" must not contain credentials'],
    ['x:99999', 'is not a valid host'],
    ['http://x?y=1', 'must be a host only'],
    ['', 'must not be empty'],
  ];
  for (const [service, message] of bad) {
    it(`rejects "${service}"`, () => {
      const o = parseService(service!);
      assert.ok('error' in o);
      assert.ok(o.error.includes(message!), o.error);
    });
  }
});
