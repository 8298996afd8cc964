import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERRORS } from './errors.js';

describe('error catalogue', () => {
  it('every code is documented in docs/errors.md with its status and message, and vice versa', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const rows = new Map<string, { status: number; message: string }>();
    for (const m of doc.matchAll(/^\| `(GW_[A-Z_]+)` \| (\d{3}) \| ([^|]+) \|/gm)) {
      rows.set(m[1]!, { status: Number(m[2]), message: m[3]!.trim() });
    }
    assert.deepEqual([...rows.keys()].sort(), Object.keys(ERRORS).sort());
    for (const [code, e] of Object.entries(ERRORS))
      assert.deepEqual(rows.get(code), { status: e.status, message: e.message }, code);
  });

  it('codes are GW_ plus upper snake case, statuses 4xx/5xx', () => {
    for (const [code, e] of Object.entries(ERRORS)) {
      assert.match(code, /^GW_[A-Z]+(_[A-Z]+)*$/);
      assert.ok(e.status >= 400 && e.status < 600, code);
    }
  });
});
