import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redactUrl } from './redact-url.js';

describe('redactUrl', () => {
  const cases: [string, string][] = [
    ['https://idp.example/.well-known/jwks.json', 'https://idp.example/.well-known/jwks.json'],
    ['https://idp.example:8443/keys?api_key=s3cr3t', 'https://idp.example:8443/keys?***'],
    ['https://user:s3cr3t@idp.example/keys', 'https://***@idp.example/keys'],
    ['http://u:p@ss:w@collector:4318/v1/traces?x=1#frag', 'http://***@collector:4318/v1/traces?***'],
    ['https://idp.example/keys#kid', 'https://idp.example/keys'],
    ['collector:4318', 'collector:4318'],
    ['not a url ?token=abc', 'not a url ?***'],
    ['//user:pw@host/x', '//***@host/x'],
  ];
  for (const [text, shown] of cases) it(text, () => assert.equal(redactUrl(text), shown));
});
