/**
 * deploy/kubernetes/redis/redis.yaml against the gateway it serves: every object valid against the
 * Kubernetes schemas (offline), the Service reaching the Redis pod, the password from the Secret,
 * and the lines its header tells to add to the gateway's ConfigMap giving a valid configuration
 * whose `redis.url` names that Service.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parse } from 'yaml';
import { Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { loadConfigText } from '../../src/config/load.js';
import { formatProblem } from '../../src/config/problems.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const text = readFileSync(`${repo}deploy/kubernetes/redis/redis.yaml`, 'utf8');
const objects = parseAllDocuments(text).map((doc) => {
  assert.deepEqual(doc.errors, []);
  return doc.toJS() as { kind: string; metadata: { name: string }; [key: string]: unknown };
});

function only<T>(kind: string): T {
  const found = objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0] as T;
}

const secret = only<{ metadata: { name: string }; stringData: Record<string, string> }>('Secret');
const deployment = only<{
  spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: IContainer[] } } };
}>('Deployment');
const service = only<{
  metadata: { name: string };
  spec: { selector: Record<string, string>; ports: { port: number; targetPort: unknown }[] };
}>('Service');
const container = deployment.spec.template.spec.containers[0]!;

/** The indented lines of the header comment that follow `marker`, up to the next `# - ` item. */
function commentBlock(marker: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.includes(marker));
  assert.ok(start >= 0, `the header says ${marker}`);
  const block: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('#     ')) break;
    block.push(line.slice('#     '.length));
  }
  return block.join('\n') + '\n';
}

describe('Kubernetes Redis example (deploy/kubernetes/redis)', () => {
  it('every object is valid against the Kubernetes schemas', () => {
    assert.deepEqual(objects.map((o) => o.kind).sort(), ['Deployment', 'Secret', 'Service']);
    new Secret(secret as never).validate();
    new Deployment(deployment as never).validate();
    new Service(service as never).validate();
  });

  it('the Service reaches the Redis container, which needs the password from the Secret and keeps nothing', () => {
    assert.deepEqual(service.spec.selector, deployment.spec.template.metadata.labels);
    const port = container.ports?.find((p) => p.name === service.spec.ports[0]!.targetPort);
    assert.equal(port?.containerPort, 6379);
    const env = container.env?.find((e) => e.name === 'REDIS_PASSWORD');
    assert.equal(env?.valueFrom?.secretKeyRef?.name, secret.metadata.name);
    assert.ok(String(env?.valueFrom?.secretKeyRef?.key) in secret.stringData);
    const args = container.args ?? [];
    assert.equal(args[args.indexOf('--requirepass') + 1], '$(REDIS_PASSWORD)');
    assert.equal(args[args.indexOf('--save') + 1], '');
    assert.equal(args[args.indexOf('--appendonly') + 1], 'no');
  });

  it("the lines to add make a valid gateway configuration that reaches this Service with the Secret's password", () => {
    const configMap = parse(readFileSync(`${repo}deploy/kubernetes/configmap.yaml`, 'utf8')) as {
      data: Record<string, string>;
    };
    const gatewayYaml = configMap.data['gateway.yaml']!.replace(
      /^config:\n/m,
      `config:\n${commentBlock('under `config:`')}`,
    );
    const envBlock = parse(commentBlock('under `env:`')) as { name: string; valueFrom: unknown }[];
    assert.deepEqual(envBlock, [
      { name: 'REDIS_PASSWORD', valueFrom: { secretKeyRef: { name: secret.metadata.name, key: 'REDIS_PASSWORD' } } },
    ]);
    const env = {
      JWT_SECRET: 'x'.repeat(32),
      METRICS_TOKEN: 'm'.repeat(32),
      REDIS_PASSWORD: secret.stringData.REDIS_PASSWORD,
    };
    const loaded = loadConfigText(gatewayYaml, 'configmap.yaml#gateway.yaml', env);
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.problems.map(formatProblem).join('\n'));
    const { redis, rateLimit, mappingCache } = loaded.config.settings;
    assert.equal(rateLimit.store, 'redis');
    assert.equal(mappingCache.store, 'redis');
    const url = new URL(redis!.url);
    assert.equal(url.hostname, service.metadata.name);
    assert.equal(Number(url.port), service.spec.ports[0]!.port);
    assert.equal(url.password, secret.stringData.REDIS_PASSWORD);
  });
});
