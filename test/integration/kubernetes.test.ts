/**
 * deploy/kubernetes/*.yaml against the gateway they deploy: every object valid against the
 * Kubernetes schemas (kubernetes-models, offline), the ConfigMap's gateway.yaml valid with the
 * environment the Deployment gives it, and the probes, ports, paths and env names matching what
 * the real gateway serves and reads (its probe paths are requested from a running gateway, so a
 * renamed endpoint fails here).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { USAGE } from '../../src/cli/args.js';
import { loadConfigText } from '../../src/config/load.js';
import type { CompiledConfig } from '../../src/config/types.js';
import { formatProblem } from '../../src/config/problems.js';
import { DRAIN_TIMEOUT_MS } from '../../src/gateway.js';
import { startGateway, type TestGateway } from '../support/gateway.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const dir = join(repo, 'deploy', 'kubernetes');

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

const objects: { file: string; object: K8sObject }[] = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => {
      assert.deepEqual(doc.errors, [], `${file} parses`);
      return { file, object: doc.toJS() as K8sObject };
    }),
  );

function only(kind: string): K8sObject {
  const found = objects.filter((o) => o.object.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0]!.object;
}

// The model that validates each kind offline, keyed as apiVersion/kind.
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

function validate(object: K8sObject): void {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  assert.ok(Model, `no schema for ${object.apiVersion} ${object.kind}`);
  new Model(object as never).validate();
}

const deployment = only('Deployment') as K8sObject & {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        terminationGracePeriodSeconds: number;
        securityContext: { runAsNonRoot?: boolean; runAsUser?: number };
        containers: IContainer[];
        volumes: { name: string; configMap?: { name: string } }[];
      };
    };
  };
};
const pod = deployment.spec.template.spec;
const container = pod.containers[0]!;
const configMap = only('ConfigMap') as K8sObject & { data: Record<string, string> };
const secret = only('Secret') as K8sObject & { stringData: Record<string, string> };

/** The config file the container reads: --config, else $PORTICO_CONFIG, else the image's default. */
function configPath(): string {
  const args = container.args ?? [];
  const flag = args.indexOf('--config');
  if (flag >= 0) return args[flag + 1]!;
  const fromEnv = container.env?.find((e) => e.name === 'PORTICO_CONFIG')?.value;
  if (fromEnv !== undefined) return fromEnv;
  const image = /PORTICO_CONFIG=(\S+)/.exec(readFileSync(join(repo, 'Dockerfile'), 'utf8'))?.[1];
  assert.ok(image, 'the Dockerfile sets PORTICO_CONFIG');
  return image;
}

/** The container's environment, Secret references resolved from secret.yaml. */
function containerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const e of container.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      assert.equal(ref.name, secret.metadata.name, `${e.name} comes from the Secret in secret.yaml`);
      assert.ok(ref.key in secret.stringData, `the Secret has ${ref.key}`);
      env[e.name] = secret.stringData[ref.key];
    } else env[e.name] = e.value;
  }
  return env;
}

/** The gateway.yaml the pods run: the ConfigMap key behind the mounted config path. */
function mountedConfig(): string {
  const path = configPath();
  const mount = container.volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
  assert.ok(mount, `${path} is on a mounted volume`);
  const volume = pod.volumes.find((v) => v.name === mount.name);
  assert.equal(volume?.configMap?.name, configMap.metadata.name, `${mount.mountPath} is the ConfigMap`);
  const key = path.slice(mount.mountPath.length + 1);
  const text = configMap.data[key];
  assert.ok(text !== undefined, `the ConfigMap has ${key}`);
  return text;
}

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  let compiled: CompiledConfig;
  let gw: TestGateway;
  before(async () => {
    const loaded = loadConfigText(mountedConfig(), 'configmap.yaml#gateway.yaml', containerEnv());
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.problems.map(formatProblem).join('\n'));
    compiled = loaded.config;
    gw = await startGateway(mountedConfig(), containerEnv());
  });
  after(() => gw?.close());

  it('has the objects a deployment needs', () => {
    assert.deepEqual(objects.map((o) => o.object.kind).sort(), [
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Secret',
      'Service',
    ]);
  });

  it('every object is valid against the Kubernetes schemas', () => {
    for (const { file, object } of objects) assert.doesNotThrow(() => validate(object), `${file}: ${object.kind}`);
  });

  it('the validation is real: a wrong type or a missing field is refused', () => {
    const broken = structuredClone(deployment);
    (broken.spec.template.spec.containers[0]!.ports![0] as { containerPort: unknown }).containerPort = 'http';
    assert.throws(() => validate(broken), /containerPort/);
    const noName = structuredClone(deployment);
    delete (noName.spec.template.spec.containers[0] as { name?: string }).name;
    assert.throws(() => validate(noName), /name/);
  });

  it('the ConfigMap holds a valid gateway.yaml whose ${NAME}s the Deployment provides', () => {
    const wanted = [...mountedConfig().matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}/g)]
      .filter((m) => m[2] === undefined)
      .map((m) => m[1]!);
    assert.ok(wanted.length > 0, 'the example reads its secret from the environment');
    for (const name of wanted) assert.ok(containerEnv()[name] !== undefined, `the Deployment sets ${name}`);
    assert.ok(compiled.routes.length > 0);
  });

  it('every env name the Deployment sets is one the gateway reads', () => {
    const cliEnv = /^Environment: (.+)\.$/m.exec(USAGE)?.[1]?.split(', ') ?? [];
    assert.ok(cliEnv.includes('PORTICO_LOG_LEVEL'), 'the usage text lists the environment');
    const configEnv = [...mountedConfig().matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
    for (const e of container.env ?? [])
      assert.ok(cliEnv.includes(e.name) || configEnv.includes(e.name), `${e.name} is read by the gateway`);
  });

  it('the container port is the port the configuration listens on, and the Service targets it', () => {
    const port = container.ports?.find((p) => p.name === 'http');
    const env = containerEnv();
    assert.equal(port?.containerPort, env.PORT !== undefined ? Number(env.PORT) : compiled.settings.port);
    const service = only('Service') as K8sObject & {
      spec: { selector: Record<string, string>; ports: { targetPort: unknown }[] };
    };
    assert.deepEqual(
      service.spec.ports.map((p) => p.targetPort),
      ['http'],
    );
    assert.deepEqual(service.spec.selector, deployment.spec.template.metadata.labels);
  });

  it('the probes ask the endpoints the gateway serves: readiness /ready (503 on drain), liveness /health', async () => {
    const readiness = container.readinessProbe?.httpGet;
    const liveness = container.livenessProbe?.httpGet;
    assert.equal(readiness?.port, 'http');
    assert.equal(liveness?.port, 'http');
    const ready = await fetch(`${gw.url}${readiness!.path}`);
    assert.equal(ready.status, 200, `readiness ${readiness!.path}`);
    assert.deepEqual(
      await ready.json(),
      { status: 'ready' },
      'readiness uses the endpoint that turns 503 while draining',
    );
    const live = await fetch(`${gw.url}${liveness!.path}`);
    assert.equal(live.status, 200, `liveness ${liveness!.path}`);
    assert.deepEqual(await live.json(), { status: 'ok' });
  });

  it('Prometheus finds /metrics by the pod annotations and reads it with the token of the Secret', async () => {
    const annotations = (deployment.spec.template.metadata as { annotations?: Record<string, string> }).annotations;
    assert.equal(annotations?.['prometheus.io/scrape'], 'true');
    const port = container.ports?.find((p) => p.name === 'http')?.containerPort;
    assert.equal(annotations?.['prometheus.io/port'], String(port), 'the annotation names the container port');
    // A scraper is another pod: without the token it is refused, whatever its address.
    const url = `${gw.url}${annotations?.['prometheus.io/path']}`;
    const refused = await fetch(url);
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    const scrape = await fetch(url, { headers: { authorization: `Bearer ${containerEnv().METRICS_TOKEN}` } });
    assert.equal(scrape.status, 200);
    assert.match(await scrape.text(), /portico_requests_in_flight/);
  });

  it('a stopping pod gets the drain delay and the whole drain before it is killed', () => {
    const delay = compiled.settings.shutdown.drainDelaySec;
    assert.ok(delay > 0, 'config.shutdown.drainDelaySec: endpoints drop the pod while it still serves');
    assert.equal(container.lifecycle?.preStop, undefined, 'no preStop pause on top of the delay');
    assert.ok(
      pod.terminationGracePeriodSeconds > delay + DRAIN_TIMEOUT_MS / 1000,
      `${pod.terminationGracePeriodSeconds} s > ${delay} s + the drain`,
    );
  });

  it('runs as non-root on a read-only root filesystem, with requests and limits', () => {
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.notEqual(pod.securityContext.runAsUser, 0);
    assert.equal(container.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(container.securityContext?.allowPrivilegeEscalation, false);
    for (const r of ['cpu', 'memory']) {
      assert.ok(container.resources?.requests?.[r], `${r} request`);
      assert.ok(container.resources?.limits?.[r], `${r} limit`);
    }
  });

  it('the PodDisruptionBudget and the autoscaler point at the Deployment', () => {
    const pdb = only('PodDisruptionBudget') as K8sObject & {
      spec: { selector: { matchLabels: Record<string, string> }; minAvailable: number };
    };
    assert.deepEqual(pdb.spec.selector.matchLabels, deployment.spec.selector.matchLabels);
    const hpa = only('HorizontalPodAutoscaler') as K8sObject & {
      spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number };
    };
    assert.deepEqual(
      [hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.name],
      ['Deployment', deployment.metadata.name],
    );
    assert.ok(hpa.spec.minReplicas > pdb.spec.minAvailable, 'a disruption can proceed at the minimum scale');
  });

  it('the container starts the gateway with --watch, so a ConfigMap change is reloaded', () => {
    assert.equal(container.args?.[0], 'start');
    assert.ok(container.args?.includes('--watch'));
  });
});
