import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { compileTokenSources, cookieValue, type TokenSource } from './token-sources.js';

function request(url: string, headers: Record<string, string> = {}): IncomingMessage {
  return { url, headers: { ...headers }, rawHeaders: Object.entries(headers).flat() } as unknown as IncomingMessage;
}

function take(sources: TokenSource[], url: string, headers: Record<string, string> = {}) {
  const req = request(url, headers);
  const q = url.indexOf('?');
  const rawQuery = compileTokenSources(sources)!.take(req, q < 0 ? '' : url.slice(q + 1));
  return { authorization: req.headers.authorization, rawQuery, url: req.url, rawHeaders: req.rawHeaders };
}

describe('compileTokenSources', () => {
  it('the header alone (the default) needs no work per request', () => {
    assert.equal(compileTokenSources(['header']), undefined);
  });

  it('a cookie becomes the bearer token when there is no Authorization header', () => {
    const r = take(['header', { cookie: 'session' }], '/a', { cookie: 'theme=dark; session=abc.def.ghi' });
    assert.equal(r.authorization, 'Bearer abc.def.ghi');
    assert.equal(r.url, '/a');
  });

  it('the first listed source that holds a token wins', () => {
    const headerFirst = take(['header', { cookie: 'session' }], '/a', {
      authorization: 'Bearer from-header',
      cookie: 'session=from-cookie',
    });
    assert.equal(headerFirst.authorization, 'Bearer from-header');
    const cookieFirst = take([{ cookie: 'session' }, 'header'], '/a', {
      authorization: 'Bearer from-header',
      cookie: 'session=from-cookie',
    });
    assert.equal(cookieFirst.authorization, 'Bearer from-cookie');
    // The backend's headers come from the raw list: the header the gateway did not verify is gone.
    assert.deepEqual(cookieFirst.rawHeaders, ['cookie', 'session=from-cookie']);
    assert.deepEqual(headerFirst.rawHeaders, ['authorization', 'Bearer from-header', 'cookie', 'session=from-cookie']);
  });

  it('an Authorization header is ignored when header is not listed', () => {
    const r = take([{ cookie: 'session' }], '/a', { authorization: 'Bearer from-header' });
    assert.equal(r.authorization, undefined);
  });

  it('a query token is used, then removed from the query and req.url', () => {
    const r = take(['header', { query: 'access_token' }], '/api/a?x=1&access_token=t%2Bk&y=2');
    assert.equal(r.authorization, 'Bearer t+k');
    assert.equal(r.rawQuery, 'x=1&y=2');
    assert.equal(r.url, '/api/a?x=1&y=2');
  });

  it('a query token is removed even when the header supplied the token', () => {
    const r = take(['header', { query: 'access_token' }], '/api/a?access_token=q', { authorization: 'Bearer h' });
    assert.equal(r.authorization, 'Bearer h');
    assert.equal(r.rawQuery, '');
    assert.equal(r.url, '/api/a');
  });

  it('a parameter sent twice, encoded names too, is ambiguous: refused, not guessed at', () => {
    const sources = compileTokenSources([{ query: 'access_token' }])!;
    const url = '/a?access%5Ftoken=one&access_token=two&keep=1';
    assert.equal(sources.take(request(url), url.slice(3)), undefined);
    const encoded = take([{ query: 'access_token' }], '/a?access%5Ftoken=one&keep=1');
    assert.equal(encoded.authorization, 'Bearer one');
    assert.equal(encoded.rawQuery, 'keep=1');
  });

  it('a token cookie sent twice is ambiguous, whichever source is used', () => {
    const sources = compileTokenSources(['header', { cookie: 'session' }])!;
    const twice = request('/a', { authorization: 'Bearer h', cookie: 'session=a; theme=dark; session=b' });
    assert.equal(sources.take(twice, ''), undefined);
    assert.equal(sources.take(request('/a', { cookie: 'sessions=a; session=b' }), ''), '');
  });

  it('an empty value is no token', () => {
    const r = take([{ query: 'access_token' }, { cookie: 'session' }], '/a?access_token=', { cookie: 'session=c' });
    assert.equal(r.authorization, 'Bearer c');
    assert.equal(r.rawQuery, '');
  });

  it('no source holds a token: no Authorization', () => {
    const r = take(['header', { cookie: 'session' }, { query: 't' }], '/a?x=1', { cookie: 'other=1' });
    assert.equal(r.authorization, undefined);
    assert.equal(r.rawQuery, 'x=1');
    assert.equal(r.url, '/a?x=1');
  });
});

describe('cookieValue', () => {
  const cases: [string | undefined, string, string | undefined][] = [
    ['a=1; b=2', 'b', '2'],
    ['a=1;b=2', 'b', '2'],
    ['ab=1; b=2', 'b', '2'],
    ['b="quoted"', 'b', 'quoted'],
    ['b=1; b=2', 'b', '1'],
    ['a=1', 'b', undefined],
    ['b', 'b', undefined],
    [undefined, 'b', undefined],
    ['b=x=y', 'b', 'x=y'],
  ];
  for (const [header, name, expected] of cases)
    it(`${JSON.stringify(header)} ${name} -> ${JSON.stringify(expected)}`, () => {
      assert.equal(cookieValue(header, name), expected);
    });
});
