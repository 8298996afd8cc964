/** `portico check` on consumers and `config.auth.apiKey`: what is refused, what is warned about. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, loadConfigText } from './load.js';
import { formatProblem } from './problems.js';

const HASH = `sha256:${'ab'.repeat(32)}`;
const ROUTE = 'routes:\n  - { method: GET, route: /a, service: "localhost:3000", path: /a, protected: true }\n';

function problems(yaml: string): string[] {
  const r = loadConfigText(yaml, 'g.yaml');
  return r.ok ? r.notices.map(formatProblem) : r.problems.map(formatProblem);
}

describe('consumer rules', () => {
  it('a protected route with apiKey alone is valid, and its consumers are compiled', () => {
    const r = loadConfigText(
      `${ROUTE}consumers:\n  - { id: acme, keys: ["${HASH.toUpperCase().replace('SHA256', 'sha256')}"], plan: gold }\nconfig:\n  auth: { apiKey: { header: X-API-Key }, defaultProtected: true }\n`,
      'g.yaml',
    );
    assert.ok(r.ok, r.ok ? '' : r.problems.map(formatProblem).join('\n'));
    assert.deepEqual(r.config.consumers, [{ id: 'acme', keyHashes: ['ab'.repeat(32)], claims: {}, plan: 'gold' }]);
    assert.deepEqual(r.notices, []);
  });

  const cases = [
    {
      name: 'consumers in both places',
      yaml: `${ROUTE}consumers: []\nconfig:\n  consumersFile: c.yaml\n  auth: { apiKey: { header: X-API-Key } }\n`,
      expect: /g\.yaml:5:18: config\.consumersFile: consumers are declared both here and under consumers:/,
    },
    {
      name: 'one hash for two consumers, however its hex is spelt',
      yaml: `${ROUTE}consumers:\n  - { id: a, keys: ["${HASH}"] }\n  - { id: b, keys: ["${HASH.replace('ab', 'AB')}"] }\nconfig:\n  auth: { apiKey: { query: key } }\n`,
      expect: /g\.yaml:5:21: consumers\[1\]\.keys\[0\]: this key hash is already consumers\[0\]\.keys\[0\]/,
    },
    {
      name: 'a header name that is not one',
      yaml: `${ROUTE}consumers: []\nconfig:\n  auth: { apiKey: { header: "x api key" } }\n`,
      expect: /config\.auth\.apiKey\.header: "x api key" is not a header name/,
    },
    {
      name: 'a query name with characters a challenge would have to escape',
      yaml: `${ROUTE}consumers: []\nconfig:\n  auth: { apiKey: { query: 'k"ey' } }\n`,
      expect: /config\.auth\.apiKey\.query: "k"ey" may hold only letters, digits/,
    },
    {
      name: 'a misspelt apiKey key',
      yaml: `${ROUTE}consumers: []\nconfig:\n  auth: { apiKey: { headr: X-API-Key } }\n`,
      expect: /unknown key "headr" \(did you mean "header"\?\)/,
    },
    {
      name: 'consumers without apiKey: a warning',
      yaml: `${ROUTE}consumers: []\nconfig:\n  auth: { secret: "${'s'.repeat(32)}" }\n`,
      expect: /g\.yaml:3:12: warning: consumers are declared but config\.auth\.apiKey is not set/,
    },
    {
      name: 'apiKey without consumers: a warning',
      yaml: `${ROUTE}config:\n  auth: { apiKey: { header: X-API-Key } }\n`,
      expect: /warning: config\.auth\.apiKey is set but no consumers are declared/,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const found = problems(c.yaml);
      assert.ok(
        found.some((p) => c.expect.test(p)),
        found.join('\n'),
      );
    });

  it('a consumers file is read relative to the configuration, and its problems name it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-consumers-'));
    writeFileSync(
      join(dir, 'keys.yaml'),
      `consumers:\n  - id: acme\n    keys: ["${HASH}"]\n    claims: { tier: gold }\n`,
    );
    writeFileSync(
      join(dir, 'g.yaml'),
      `${ROUTE}config:\n  consumersFile: keys.yaml\n  auth: { apiKey: { header: X-API-Key } }\n`,
    );
    const ok = loadConfig(join(dir, 'g.yaml'));
    assert.ok(ok.ok);
    assert.equal(ok.config.consumersFile, join(dir, 'keys.yaml'));
    assert.deepEqual(ok.config.consumers[0]?.claims, { tier: 'gold' });

    writeFileSync(join(dir, 'keys.yaml'), 'consumers:\n  - id: acme\n    keys: [nope]\n');
    const bad = loadConfig(join(dir, 'g.yaml'));
    assert.ok(!bad.ok);
    assert.deepEqual(bad.problems.map(formatProblem), [
      `${join(dir, 'keys.yaml')}:3:12: consumers[0].keys[0]: expected "sha256:" and the 64 hex digits of the key's SHA-256 (portico key prints one)`,
    ]);

    writeFileSync(
      join(dir, 'g.yaml'),
      `${ROUTE}config:\n  consumersFile: missing.yaml\n  auth: { apiKey: { header: X-API-Key } }\n`,
    );
    const missing = loadConfig(join(dir, 'g.yaml'));
    assert.ok(!missing.ok);
    assert.match(formatProblem(missing.problems[0]!), /missing\.yaml:1:1: file not found: /);
  });

  it('a JSON consumers file: read when valid, its problems located by line and column when not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-consumers-'));
    const consumer = (id: string) => `{ "id": "${id}", "keys": ["${HASH}"], "plan": "gold" }`;
    writeFileSync(join(dir, 'keys.json'), `{ "consumers": [\n  ${consumer('acme')}\n] }\n`);
    writeFileSync(
      join(dir, 'g.yaml'),
      `${ROUTE}config:\n  consumersFile: keys.json\n  auth: { apiKey: { header: X-API-Key } }\n`,
    );
    const ok = loadConfig(join(dir, 'g.yaml'));
    assert.ok(ok.ok);
    assert.deepEqual(ok.config.consumers[0]?.plan, 'gold');

    writeFileSync(join(dir, 'keys.json'), `{ "consumers": [\n  ${consumer('acme')},\n  ${consumer('acme')}\n] }\n`);
    const bad = loadConfig(join(dir, 'g.yaml'));
    assert.ok(!bad.ok);
    const found = bad.problems.map(formatProblem);
    assert.ok(
      found.includes(`${join(dir, 'keys.json')}:3:11: consumers[1].id: "acme" is already the id of consumers[0]`),
      found.join('\n'),
    );
    assert.ok(
      found.some(
        (p) =>
          p.startsWith(`${join(dir, 'keys.json')}:3:`) && p.includes('this key hash is already consumers[0].keys[0]'),
      ),
      found.join('\n'),
    );
  });

  it('a plain YAML consumers file (the fast path): read when valid, its problems located when not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-consumers-'));
    const consumer = (id: string, key = 'keys') =>
      `  - id: ${id}\n    ${key}:\n      - ${HASH}\n    claims: { customer: ${id} }\n    plan: gold\n`;
    writeFileSync(join(dir, 'keys.yaml'), `consumers:\n${consumer('acme')}`);
    writeFileSync(
      join(dir, 'g.yaml'),
      `${ROUTE}config:\n  consumersFile: keys.yaml\n  auth: { apiKey: { header: X-API-Key } }\n`,
    );
    const ok = loadConfig(join(dir, 'g.yaml'));
    assert.ok(ok.ok);
    assert.deepEqual(ok.config.consumers, [
      { id: 'acme', keyHashes: ['ab'.repeat(32)], claims: { customer: 'acme' }, plan: 'gold' },
    ]);

    writeFileSync(
      join(dir, 'keys.yaml'),
      `consumers:\n${consumer('acme')}${consumer('globex', 'kyes')}${consumer('acme')}`,
    );
    const bad = loadConfig(join(dir, 'g.yaml'));
    assert.ok(!bad.ok);
    const found = bad.problems.map(formatProblem);
    const file = join(dir, 'keys.yaml');
    assert.ok(
      found.some((p) => p.startsWith(`${file}:8:5: consumers[1]: unknown key "kyes"`)),
      found.join('\n'),
    );
    assert.ok(
      found.includes(`${file}:12:9: consumers[2].id: "acme" is already the id of consumers[0]`),
      found.join('\n'),
    );
  });
});
