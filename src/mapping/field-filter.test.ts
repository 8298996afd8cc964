import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FieldRules } from '../config/types.js';
import { compileFieldFilter } from './field-filter.js';

const run = (rules: FieldRules, text: string) => compileFieldFilter(rules)!(text);

describe('compileFieldFilter', () => {
  it('has nothing to do without rules', () => {
    assert.equal(compileFieldFilter(undefined), undefined);
    assert.equal(compileFieldFilter({ deny: [], rename: {} }), undefined);
  });
  it('allow keeps only the listed fields, nested by dot path, in objects and arrays of objects', () => {
    const text = '{"id":1,"secret":"s","user":{"name":"a","email":"e"},"tags":[{"k":1,"v":2},{"k":3}],"n":5}';
    assert.equal(
      run({ allow: ['id', 'user.name', 'tags.k', 'n.x'] }, text),
      '{"id":1,"user":{"name":"a"},"tags":[{"k":1},{"k":3}]}',
    );
  });
  it('deny drops the listed fields; a path into a scalar changes nothing', () => {
    const text = '{"id":1,"password":"p","user":{"name":"a","token":"t"},"n":5}';
    assert.equal(run({ deny: ['password', 'user.token', 'n.x'] }, text), '{"id":1,"user":{"name":"a"},"n":5}');
  });
  it('applies to each item of an array body and keeps the text between items', () => {
    assert.equal(run({ deny: ['b'] }, '[ {"a":1,"b":2},\n {"a":3} ]'), '[ {"a":1},\n {"a":3} ]');
  });
  it('renames top-level fields; a renamed field replaces an existing one of that name', () => {
    assert.equal(run({ rename: { a: 'b' } }, '{"b":0,"a":1,"c":2}'), '{"b":1,"c":2}');
    assert.equal(run({ rename: { a: 'b', b: 'a' } }, '{"a":1,"b":2}'), '{"b":1,"a":2}');
    assert.equal(run({ allow: ['a'], rename: { a: 'x' } }, '{"a":1,"b":2}'), '{"x":1}');
  });
  it('keeps kept values byte for byte: big numbers, escapes, number text', () => {
    const text = '{"big":12345678901234567890,"s":"\\u00e9\\n","f":1.0e5,"drop":1}';
    assert.equal(run({ deny: ['drop'] }, text), '{"big":12345678901234567890,"s":"\\u00e9\\n","f":1.0e5}');
  });
  it('leaves what is not an object or an array of objects', () => {
    assert.equal(run({ deny: ['a'] }, '[1,2]'), undefined);
    assert.equal(run({ deny: ['a'] }, '"text"'), undefined);
    assert.equal(run({ deny: ['a'] }, '{"a":'), undefined);
  });
  it('matches keys written with escapes, and levels with many names', () => {
    assert.equal(run({ deny: ['pass'] }, '{"p\\u0061ss":1,"a":2}'), '{"a":2}');
    assert.equal(run({ rename: { 'a"b': 'c' } }, '{"a\\"b":1}'), '{"c":1}');
    const many = Array.from({ length: 12 }, (_, i) => `f${i}`);
    assert.equal(run({ allow: many }, '{"f11":1,"g":2,"f0":3}'), '{"f11":1,"f0":3}');
  });
  it('keeps a non-object array under a dot path (deny) or drops it (allow), and filters [] and {}', () => {
    assert.equal(run({ deny: ['r.x'] }, '{"r":[{"x":1},2],"e":[],"o":{}}'), '{"r":[{"x":1},2],"e":[],"o":{}}');
    assert.equal(run({ allow: ['r.x', 'e.x', 'o.x'] }, '{"r":[{"x":1},2],"e":[],"o":{}}'), '{"e":[],"o":{}}');
  });
  it('refuses invalid JSON anywhere, skipped values included', () => {
    assert.equal(run({ deny: ['a'] }, '{"a":[1,],"b":1}'), undefined);
    assert.equal(run({ allow: ['b'] }, '{"a":"\u0001","b":1}'), undefined);
    assert.equal(run({ deny: ['a'] }, '{"a":1,"b":01}'), undefined);
    assert.equal(run({ deny: ['a'] }, '{"a":1} x'), undefined);
  });
  it('gives what JSON.parse + delete + rename in place would give, on random documents', () => {
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    const names = ['a', 'b', 'c', 'd'];
    const value = (depth: number): unknown => {
      const k = rand(depth > 2 ? 3 : 6);
      if (k === 0) return rand(1000);
      if (k === 1) return `s${rand(9)}`;
      if (k === 2) return null;
      if (k === 3) return Array.from({ length: rand(3) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: rand(4) }, () => [names[rand(4)]!, value(depth + 1)]));
    };
    const reference = (body: unknown, rules: FieldRules): unknown => {
      const shape = (
        v: unknown,
        allow: readonly string[] | undefined,
        deny: readonly string[] | undefined,
        top: boolean,
      ): unknown => {
        const o = v as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(o)) {
          const inAllow = allow?.filter((p) => p === k || p.startsWith(`${k}.`));
          if (allow !== undefined && inAllow!.length === 0) continue;
          if (deny?.includes(k)) continue;
          const subAllow = inAllow?.includes(k) ? undefined : inAllow?.map((p) => p.slice(k.length + 1));
          const subDeny = deny?.filter((p) => p.startsWith(`${k}.`)).map((p) => p.slice(k.length + 1));
          const sub = subAllow ?? (subDeny !== undefined && subDeny.length > 0 ? subDeny : undefined);
          let y: unknown = x;
          if (sub !== undefined) {
            const isObj = (z: unknown) => z !== null && typeof z === 'object' && !Array.isArray(z);
            if (isObj(x)) y = shape(x, subAllow, subAllow ? undefined : subDeny, false);
            else if (Array.isArray(x) && x.every(isObj))
              y = x.map((z) => shape(z, subAllow, subAllow ? undefined : subDeny, false));
            else if (subAllow !== undefined) continue;
          }
          out[k] = y;
        }
        if (!top || rules.rename === undefined) return out;
        const renamed: [string, unknown][] = [];
        const targets = new Set(
          Object.entries(rules.rename)
            .filter(([f, t]) => f !== t && f in out)
            .map(([, t]) => t),
        );
        for (const [k, x] of Object.entries(out)) {
          const to = rules.rename[k];
          if (to === undefined && targets.has(k)) continue;
          renamed.push([to ?? k, x]);
        }
        return Object.fromEntries(renamed);
      };
      return Array.isArray(body)
        ? body.map((b) => shape(b, rules.allow, rules.deny, true))
        : shape(body, rules.allow, rules.deny, true);
    };
    const ruleSets: FieldRules[] = [
      { deny: ['a', 'b.c', 'c.d.a'] },
      { allow: ['a', 'b.c', 'c.a.b'] },
      { deny: ['d.d'], rename: { a: 'b' } },
      { allow: ['a', 'c'], rename: { c: 'd' } },
    ];
    let checked = 0;
    for (let n = 0; n < 300; n++) {
      const body =
        rand(3) === 0
          ? [value(1), value(1)].filter((v) => v !== null && typeof v === 'object' && !Array.isArray(v))
          : value(0);
      const isObj = (z: unknown) => z !== null && typeof z === 'object' && !Array.isArray(z);
      if (!(isObj(body) || (Array.isArray(body) && body.length > 0 && body.every(isObj)))) continue;
      checked++;
      const text = JSON.stringify(body);
      for (const rules of ruleSets) {
        const out = run(rules, text);
        assert.notEqual(out, undefined, text);
        // Compared as text: the order of the members is part of the result.
        assert.equal(out, JSON.stringify(reference(body, rules)), `${JSON.stringify(rules)} on ${text}`);
      }
    }
    assert.ok(checked > 100, `only ${checked} documents`);
  });
});
