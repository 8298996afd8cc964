/**
 * Keys of tainha-gateway files, read under their own names so that its files run unchanged
 * (docs/troubleshooting.md, "Files written for tainha-gateway"): the settings each stands for,
 * the note `check` prints about it in Portico's spelling, and the Portico keys it must not
 * contradict.
 */
import type { GatewaySettings } from './schema.js';
import type { AddProblem } from './problems.js';
import type { ConfigPath } from './parse.js';
import { isRecord } from './raw-value.js';
import { redactUrl } from './syntax/redact-url.js';

/** tainha-gateway exports spans over gRPC; OTLP collectors serve OTLP/HTTP on the next port. */
const OTLP_GRPC_PORT = '4317';
const OTLP_HTTP_PORT = '4318';
/** A host name or address, then an optional port. */
const HOST_PORT = /^([^/\s:[\]]+|\[[0-9a-f:.]+\])(:\d+)?$/i;

/** The settings with each tainha-gateway key applied to the Portico keys it stands for. */
export function withTainhaKeys(settings: GatewaySettings): GatewaySettings {
  const { idleTimeoutSec, telemetry } = settings;
  const timeouts =
    idleTimeoutSec === undefined ? settings.timeouts : { ...settings.timeouts, keepAliveSec: idleTimeoutSec };
  const { enabled, exporterEndpoint } = telemetry;
  // tainha-gateway exports spans only when telemetry is enabled, and then to exporterEndpoint.
  const otlpEndpoint =
    enabled === true && exporterEndpoint !== undefined ? otlpHttpEndpoint(exporterEndpoint) : telemetry.otlpEndpoint;
  return {
    ...settings,
    timeouts,
    telemetry: {
      ...telemetry,
      ...(enabled === undefined ? {} : { metrics: enabled, propagation: enabled }),
      ...(otlpEndpoint === undefined ? {} : { otlpEndpoint }),
    },
  };
}

/** tainha-gateway's `host:port` for OTLP over gRPC, as the OTLP/HTTP endpoint of the same collector. */
function otlpHttpEndpoint(written: string): string {
  if (/^https?:\/\//i.test(written)) return written;
  const port = /:(\d+)$/.exec(written)?.[1];
  if (port === undefined) return `http://${written}:${OTLP_HTTP_PORT}`;
  return `http://${port === OTLP_GRPC_PORT ? `${written.slice(0, -port.length)}${OTLP_HTTP_PORT}` : written}`;
}

type Note = (path: ConfigPath, message: string) => void;

/** A written endpoint as messages show it: credentials and a query may hold a secret. */
const shown = (endpoint: string) => (/[@?#]/.test(endpoint) ? redactUrl(endpoint) : endpoint);

/** What each tainha-gateway key of the file became, one note each. */
export function tainhaNotes(settings: GatewaySettings, note: Note): void {
  const { idleTimeoutSec, readTimeoutSec, writeTimeoutSec, telemetry, auth } = settings;
  if (idleTimeoutSec !== undefined)
    note(['config', 'idleTimeoutSec'], `config.idleTimeoutSec: ${idleTimeoutSec} -> timeouts.keepAliveSec`);
  if (readTimeoutSec !== undefined) {
    note(
      ['config', 'readTimeoutSec'],
      `config.readTimeoutSec: ${readTimeoutSec} -> the whole request (head and body) must arrive within ${readTimeoutSec} s, else 408`,
    );
  }
  if (writeTimeoutSec !== undefined) {
    note(
      ['config', 'writeTimeoutSec'],
      `config.writeTimeoutSec: ${writeTimeoutSec} -> a client that takes none of a waiting response for ${writeTimeoutSec} s is disconnected (idle or flowing streams are not cut)`,
    );
  }
  const { enabled, exporterEndpoint } = telemetry;
  if (enabled !== undefined) {
    note(
      ['config', 'telemetry', 'enabled'],
      `config.telemetry.enabled: ${enabled} -> telemetry.metrics: ${enabled} and telemetry.propagation: ${enabled}`,
    );
  }
  if (exporterEndpoint !== undefined)
    note(['config', 'telemetry', 'exporterEndpoint'], exporterNote(exporterEndpoint, enabled));
  if (auth.algorithm !== undefined) {
    note(
      ['config', 'auth', 'algorithm'],
      `config.auth.algorithm: ${auth.algorithm} -> not used: Portico takes the algorithm from the key (auth.secret: HS256, HS384 or HS512; auth.jwksUrl: the key that signed the token)`,
    );
  }
}

function exporterNote(written: string, enabled: boolean | undefined): string {
  const head = `config.telemetry.exporterEndpoint: ${shown(written)} ->`;
  if (enabled !== true)
    return `${head} not used: spans are exported only with telemetry.enabled: true (Portico: telemetry.otlpEndpoint)`;
  const endpoint = shown(otlpHttpEndpoint(written));
  const why = endpoint.endsWith(`:${OTLP_HTTP_PORT}`)
    ? `Portico exports OTLP over HTTP, which collectors serve on ${OTLP_HTTP_PORT}, not gRPC on ${OTLP_GRPC_PORT}`
    : 'Portico exports OTLP over HTTP: the collector must accept it there';
  return `${head} telemetry.otlpEndpoint: ${endpoint} (${why})`;
}

/** tainha-gateway keys must not contradict the Portico keys they stand for. */
export function compatibilityRules(raw: Record<string, unknown>, at: AddProblem): void {
  if (!isRecord(raw.config)) return;
  const { timeouts, telemetry } = raw.config;
  const both = (path: ConfigPath, message: string) => at(path, message, 'keep one of them');
  if (raw.config.idleTimeoutSec !== undefined && isRecord(timeouts) && timeouts.keepAliveSec !== undefined)
    both(
      ['config', 'idleTimeoutSec'],
      'config.idleTimeoutSec and config.timeouts.keepAliveSec both set the keep-alive idle time',
    );
  if (!isRecord(telemetry)) return;
  for (const key of ['metrics', 'propagation']) {
    if (telemetry.enabled !== undefined && telemetry[key] !== undefined) {
      both(
        ['config', 'telemetry', 'enabled'],
        `config.telemetry.enabled and config.telemetry.${key} both turn ${key} on or off`,
      );
    }
  }
  const endpoint = telemetry.exporterEndpoint;
  if (endpoint !== undefined && telemetry.otlpEndpoint !== undefined) {
    both(
      ['config', 'telemetry', 'exporterEndpoint'],
      'config.telemetry.exporterEndpoint and config.telemetry.otlpEndpoint both name the span collector',
    );
  }
  if (typeof endpoint === 'string' && !HOST_PORT.test(endpoint) && !/^https?:\/\/[^/\s]/i.test(endpoint)) {
    at(
      ['config', 'telemetry', 'exporterEndpoint'],
      `config.telemetry.exporterEndpoint: "${shown(endpoint)}" must be HOST:PORT (as for tainha-gateway) or an http:// or https:// URL`,
    );
  }
}
