/**
 * Every configuration example of tainha-gateway's README and documentation (copied under
 * test/fixtures/tainha/ from lusqua/tainha-gateway; its README names the commit and the file and
 * line of each) is valid and starts; `portico check` and `portico start` run on the Full Example
 * as a user runs them, the CLI as a child process.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPortico, ROOT } from '../support/cli-run.js';
import { startPortico } from '../support/cli-process.js';
import { startGateway } from '../support/gateway.js';
import { get } from '../support/http.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';

const FIXTURES = join(ROOT, 'test/fixtures/tainha');

type Kind = 'file' | 'config' | 'settings' | 'routes' | 'route-keys' | 'mapping-keys' | 'each-line' | 'incomplete';

/** The fixtures and their kinds, from the README's table (`| \`name.yaml\` | source | kind |`). */
function manifest(): Map<string, Kind> {
  const rows = readFileSync(join(FIXTURES, 'README.md'), 'utf8').matchAll(
    /^\| `([\w.-]+\.yaml)` \| .+ \| ([\w-]+) \|$/gm,
  );
  return new Map([...rows].map((m) => [m[1]!, m[2] as Kind]));
}

/** tainha-gateway's "Minimal Config" route, which completes the examples that are parts of a file. */
const ROUTE_KEYS = ['method: GET', 'route: /users', 'service: localhost:3000', 'path: /users'];
const RULE_KEYS = ['path: /categories?id={categoryId}', 'service: localhost:3000', 'tag: category'];

const indent = (text: string, n: number) =>
  text
    .split('\n')
    .map((l) => (l === '' ? l : ' '.repeat(n) + l))
    .join('\n');
const keysOf = (text: string) => new Set([...text.matchAll(/^(\w+):/gm)].map((m) => m[1]));
/** `base` without the keys `text` writes, then `text`: a YAML mapping at column 0. */
const merged = (base: readonly string[], text: string) =>
  [...base.filter((k) => !keysOf(text).has(k.split(':')[0])), text].join('\n');
const route = (keys = '') => `routes:\n  -\n${indent(merged(ROUTE_KEYS, keys), 4)}\n`;

/** The whole files an example stands for, as tainha-gateway's README table describes. */
function wholeFiles(kind: Kind, text: string): string[] {
  switch (kind) {
    case 'file':
    case 'incomplete':
      return [text];
    case 'config':
      return [`${text}\n${route()}`];
    case 'settings':
      return [`config:\n${indent(text, 2)}\n${route()}`];
    case 'routes':
      return [`routes:\n${text}`];
    case 'route-keys':
      return [route(text)];
    case 'mapping-keys':
      return [route(`mapping:\n  -\n${indent(merged(RULE_KEYS, text), 4)}`)];
    case 'each-line':
      return text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => route(l));
  }
}

describe("tainha-gateway's documented configuration examples", () => {
  const kinds = manifest();
  let dir: string;
  /** Each whole file by name (`NAME.yaml`, or `NAME.N.yaml` for each line of an each-line example). */
  const files = new Map<string, { kind: Kind; text: string }>();

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'portico-tainha-'));
    for (const [name, kind] of kinds) {
      const texts = wholeFiles(kind, readFileSync(join(FIXTURES, name), 'utf8'));
      texts.forEach((text, i) => {
        const file = texts.length === 1 ? name : name.replace(/\.yaml$/, `.${i + 1}.yaml`);
        writeFileSync(join(dir, file), text);
        files.set(file, { kind, text });
      });
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists every fixture in the README, with a kind the test knows', () => {
    const yaml = readdirSync(FIXTURES).filter((f) => f.endsWith('.yaml'));
    assert.deepEqual([...kinds.keys()].sort(), yaml.sort());
    assert.ok(yaml.length >= 50, `${yaml.length} fixtures`);
  });

  // Each CLI run costs over a second of CPU: every example goes through the loader that check
  // and start call, and the CLI itself runs on the Full Example.
  it('the loader accepts each one (warnings and notes only) and refuses the incomplete ones as tainha does', () => {
    const failures: string[] = [];
    for (const [file, { kind, text }] of files) {
      const r = loadConfigText(text, file, {});
      if (kind === 'incomplete') {
        const found = r.ok ? [] : r.problems.map(formatProblem);
        if (!found.some((p) => /routes\[0\]: missing required key "service"/.test(p)))
          failures.push(`${file}: expected the missing service to be refused, got ${found.join('; ')}`);
      } else if (!r.ok) {
        failures.push(`${file} (${kind}):\n${r.problems.map(formatProblem).join('\n')}`);
      } else {
        for (const n of r.notices)
          if (n.severity !== 'note' && n.severity !== 'warning') failures.push(`${file}: ${formatProblem(n)}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  it("says what each tainha-gateway key of the Full Example became, in Portico's spelling", async () => {
    const r = await runPortico(['check', '--config', 'configuration-index-2.yaml'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^configuration-index-2\.yaml: ok \(4 routes\)\n/);
    assert.deepEqual(r.stderr.trimEnd().split('\n'), [
      'configuration-index-2.yaml:4:19: note: config.readTimeoutSec: 15 -> the whole request (head and body) must arrive within 15 s, else 408',
      'configuration-index-2.yaml:5:20: note: config.writeTimeoutSec: 30 -> a client that takes none of a waiting response for 30 s is disconnected (idle or flowing streams are not cut)',
      'configuration-index-2.yaml:6:19: note: config.idleTimeoutSec: 60 -> timeouts.keepAliveSec',
      'configuration-index-2.yaml:28:14: note: config.telemetry.enabled: true -> telemetry.metrics: true and telemetry.propagation: true',
      'configuration-index-2.yaml:30:23: note: config.telemetry.exporterEndpoint: jaeger:4317 -> telemetry.otlpEndpoint: http://jaeger:4318 (Portico exports OTLP over HTTP, which collectors serve on 4318, not gRPC on 4317)',
    ]);
  });

  it('the gateway starts on each distinct file that has settings', async () => {
    const distinct = new Map<string, string>();
    for (const [file, { kind, text }] of files)
      if (kind !== 'incomplete' && /^config:/m.test(text) && !distinct.has(text)) distinct.set(text, file);
    assert.ok(distinct.size >= 15, `${distinct.size} files`);
    for (const [text, file] of distinct) {
      const gw = await startGateway(text, {}).catch((err: unknown) => assert.fail(`${file}: ${String(err)}`));
      const health = await gw.get('/health');
      await gw.close();
      assert.equal(health.status, 200, file);
    }
  });

  it('portico start serves the Full Example', async () => {
    const gw = await startPortico(['--config', join(dir, 'configuration-index-2.yaml')]);
    try {
      assert.equal((await get(`${gw.url}/health`)).status, 200);
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  });
});
