/** Where an API key is read: header, query parameter, or either; a key sent twice is ambiguous. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { compileApiKeySource } from './api-key-source.js';

/** A request head with these raw headers (names may repeat) and URL. */
function request(raw: string[], url = '/'): IncomingMessage {
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) headers[raw[i]!.toLowerCase()] = raw[i + 1]!;
  return { url, headers, rawHeaders: raw } as unknown as IncomingMessage;
}

describe('compileApiKeySource', () => {
  it('is undefined without a header or a parameter', () => {
    assert.equal(compileApiKeySource(undefined), undefined);
    assert.equal(compileApiKeySource({}), undefined);
  });

  const source = compileApiKeySource({ header: 'X-API-Key', query: 'api_key' })!;

  const cases: { name: string; raw: string[]; query: string; key: string | undefined; rest: string | undefined }[] = [
    { name: 'the header, any case', raw: ['x-Api-KEY', 'k1'], query: 'a=1', key: 'k1', rest: 'a=1' },
    { name: 'the parameter, taken out', raw: [], query: 'a=1&api_key=k2&b=2', key: 'k2', rest: 'a=1&b=2' },
    { name: 'an encoded parameter name and value', raw: [], query: 'api%5Fkey=k%2B3', key: 'k+3', rest: '' },
    { name: 'an empty parameter: a key, the empty one', raw: [], query: 'api_key=', key: '', rest: '' },
    { name: 'neither', raw: ['accept', '*/*'], query: 'a=1', key: undefined, rest: 'a=1' },
    {
      name: 'the header twice',
      raw: ['x-api-key', 'k1', 'X-API-KEY', 'k1'],
      query: '',
      key: undefined,
      rest: undefined,
    },
    { name: 'the parameter twice', raw: [], query: 'api_key=k1&api_key=k2', key: undefined, rest: undefined },
    {
      name: 'the header and the parameter',
      raw: ['x-api-key', 'k1'],
      query: 'api_key=k1',
      key: undefined,
      rest: undefined,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const req = request(c.raw, `/orders${c.query === '' ? '' : `?${c.query}`}`);
      const taken = source.take(req, c.query);
      if (c.rest === undefined) return assert.equal(taken, undefined);
      assert.deepEqual(taken, { key: c.key, rest: c.rest });
      assert.equal(req.url, `/orders${c.rest === '' ? '' : `?${c.rest}`}`);
    });

  it('strip takes the parameter out of a route that reads no key', () => {
    const req = request([], '/status?api_key=k1&x=1');
    assert.equal(source.strip(req, 'api_key=k1&x=1'), 'x=1');
    assert.equal(req.url, '/status?x=1');
  });

  it('the header alone: the query is left as it is', () => {
    const headerOnly = compileApiKeySource({ header: 'X-API-Key' })!;
    assert.deepEqual(headerOnly.take(request([], '/?api_key=k1'), 'api_key=k1'), {
      key: undefined,
      rest: 'api_key=k1',
    });
  });
});
