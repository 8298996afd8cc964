import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { compileStickyKey, cookieValue } from './sticky-key.js';

const ex = (headers: Record<string, string>, claims?: Record<string, unknown>) => ({
  req: { headers } as unknown as IncomingMessage,
  claims,
});

describe('compileStickyKey', () => {
  it('reads a header, case-insensitively by its lower-case name', () => {
    const read = compileStickyKey({ from: 'header', name: 'x-user' });
    assert.equal(read(ex({ 'x-user': 'alice' })), 'alice');
    assert.equal(read(ex({})), undefined);
    assert.equal(read(ex({ 'x-user': '' })), undefined);
  });

  it('reads one cookie of the Cookie header', () => {
    const read = compileStickyKey({ from: 'cookie', name: 'sid' });
    assert.equal(read(ex({ cookie: 'theme=dark; sid=abc123; x=1' })), 'abc123');
    assert.equal(read(ex({ cookie: 'xsid=1; sidx=2' })), undefined);
    assert.equal(read(ex({})), undefined);
  });

  it('reads a string or number claim of the valid token', () => {
    const read = compileStickyKey({ from: 'claim', name: 'sub' });
    assert.equal(read(ex({}, { sub: 'u-1' })), 'u-1');
    assert.equal(read(ex({}, { sub: 42 })), '42');
    assert.equal(read(ex({}, { sub: { a: 1 } })), undefined);
    assert.equal(read(ex({})), undefined);
  });
});

describe('cookieValue', () => {
  it('finds the first cookie of that name, spaces trimmed', () => {
    assert.equal(cookieValue('a=1;b=2', 'b'), '2');
    assert.equal(cookieValue(' a = 1 ', 'a'), '1');
    assert.equal(cookieValue('a', 'a'), undefined);
  });
});
