/**
 * The standard OpenTelemetry environment variables, merged with `config.telemetry` once per
 * config load (never per request). A key written in the YAML file wins over its variable; a
 * variable fills only what the file leaves out.
 *
 * - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: the traces URL, used as-is.
 * - `OTEL_EXPORTER_OTLP_ENDPOINT`: a base URL, `/v1/traces` appended.
 * - `OTEL_SERVICE_NAME`: service.name (over a service.name in the resource attributes).
 * - `OTEL_RESOURCE_ATTRIBUTES`: `key=value,key2=value2`, keys and values percent-decoded.
 * - `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`: the gateway samples parent-based (a
 *   client's `traceparent` keeps its flag), so `parentbased_*` map exactly; `always_off` turns
 *   span export off; `always_on` and `traceidratio` map to their parent-based form, with a warning.
 * - `OTEL_SDK_DISABLED=true`: no span export at all, whatever else is set; propagation stays.
 */
import { redactUrl } from './syntax/redact-url.js';
import type { GatewaySettings } from './schema.js';
import type { TracingSettings } from './types.js';

type Telemetry = GatewaySettings['telemetry'];

/** The `/v1/traces` URL of a collector base URL (a URL already ending so is kept). */
export function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.trim());
  } catch {
    return text.trim();
  }
}

/** Parses `key=value,key2=value2`; malformed entries are skipped and reported. */
export function parseResourceAttributes(text: string, warnings: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const eq = entry.indexOf('=');
    const key = eq < 0 ? '' : decode(entry.slice(0, eq));
    if (key === '') {
      warnings.push(`OTEL_RESOURCE_ATTRIBUTES: "${entry.trim()}" is not key=value; skipped`);
      continue;
    }
    out.push([key, decode(entry.slice(eq + 1))]);
  }
  return out;
}

interface Sampling {
  readonly ratio: number | undefined;
  readonly exportOff: boolean;
}

function samplerArg(env: NodeJS.ProcessEnv, warnings: string[]): number {
  const raw = env.OTEL_TRACES_SAMPLER_ARG;
  if (raw === undefined || raw.trim() === '') return 1;
  const n = Number(raw);
  if (Number.isFinite(n) && n >= 0 && n <= 1) return n;
  warnings.push(`OTEL_TRACES_SAMPLER_ARG "${raw}" is not a number in [0, 1]; using 1`);
  return 1;
}

function sampling(env: NodeJS.ProcessEnv, warnings: string[]): Sampling {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  switch (name) {
    case undefined:
    case '':
      return { ratio: undefined, exportOff: false };
    case 'parentbased_always_on':
      return { ratio: 1, exportOff: false };
    case 'parentbased_always_off':
      return { ratio: 0, exportOff: false };
    case 'parentbased_traceidratio':
      return { ratio: samplerArg(env, warnings), exportOff: false };
    case 'always_off':
      return { ratio: 0, exportOff: true };
    case 'always_on':
      warnings.push(
        'OTEL_TRACES_SAMPLER=always_on is applied as parentbased_always_on: a client traceparent keeps its sampled flag',
      );
      return { ratio: 1, exportOff: false };
    case 'traceidratio':
      warnings.push(
        'OTEL_TRACES_SAMPLER=traceidratio is applied as parentbased_traceidratio: a client traceparent keeps its sampled flag',
      );
      return { ratio: samplerArg(env, warnings), exportOff: false };
    default:
      warnings.push(
        `OTEL_TRACES_SAMPLER "${env.OTEL_TRACES_SAMPLER}" is not supported (supported: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio); ignored`,
      );
      return { ratio: undefined, exportOff: false };
  }
}

/** The `config.telemetry` keys written in the file (before defaults were applied). */
export function writtenTelemetryKeys(raw: unknown): ReadonlySet<string> {
  const config = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>).config : undefined;
  const telemetry =
    typeof config === 'object' && config !== null ? (config as Record<string, unknown>).telemetry : undefined;
  return new Set(typeof telemetry === 'object' && telemetry !== null ? Object.keys(telemetry) : []);
}

/**
 * The tracing settings of one config load: `telemetry` as validated, `written` the keys the file
 * set (the rest are defaults an environment variable may replace), `env` read here and only here.
 */
export function resolveTracing(
  telemetry: Telemetry,
  written: ReadonlySet<string>,
  env: NodeJS.ProcessEnv,
): TracingSettings {
  const warnings: string[] = [];
  const resourceAttributes = parseResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES ?? '', warnings);
  const fromAttributes = resourceAttributes.find(([k]) => k === 'service.name')?.[1];
  const serviceName = written.has('serviceName')
    ? telemetry.serviceName
    : (nonEmpty(env.OTEL_SERVICE_NAME) ?? fromAttributes ?? telemetry.serviceName);
  const sampler = sampling(env, warnings);
  const sampleRatio = written.has('sampleRatio') || sampler.ratio === undefined ? telemetry.sampleRatio : sampler.ratio;
  const envUrl =
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ??
    mapDefined(nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT), (base) => `${base.replace(/\/+$/, '')}/v1/traces`);
  let url = telemetry.otlpEndpoint === undefined ? envUrl : tracesUrl(telemetry.otlpEndpoint);
  if (url !== undefined && !/^https?:\/\/[^/]/i.test(url)) {
    warnings.push(`OTLP traces endpoint "${redactUrl(url)}" is not an http:// or https:// URL; spans are not exported`);
    url = undefined;
  }
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || sampler.exportOff) url = undefined;
  return {
    tracesUrl: url,
    serviceName,
    sampleRatio,
    resourceAttributes: resourceAttributes.filter(([k]) => k !== 'service.name'),
    warnings,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function mapDefined<T, U>(value: T | undefined, f: (v: T) => U): U | undefined {
  return value === undefined ? undefined : f(value);
}
