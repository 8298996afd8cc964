/**
 * One mapping call: GET on the rule's origin through its keep-alive pool (spec 4.3: 64
 * connections per host), within `timeouts.mappingSec`, under the origin's circuit.
 * It never throws: every failure becomes an outcome with a reason for the warning log.
 */
import type { Upstream } from '../upstream/upstream.js';
import { classifyUpstreamError } from '../upstream/upstream-error.js';
import type { MappingOutcome } from './cache.js';
import { decodeBody, isJsonContentType, readLimited, utf8Text } from './body.js';

export interface MappingCallOptions {
  readonly requestId: string;
  /** Whole-call budget (headers and body). */
  readonly timeoutMs: number;
  /** Largest answer accepted. */
  readonly maxBytes: number;
  /** Aborted when nobody needs the answer any more (the client left); absent for shared calls. */
  readonly signal?: AbortSignal | undefined;
}

const CIRCUIT_OPEN: MappingOutcome = Object.freeze({ ok: false, reason: 'circuit open' });

/** Fetches `path` from the upstream and returns its JSON text, or why there is none. */
export async function callMapping(upstream: Upstream, path: string, options: MappingCallOptions): Promise<MappingOutcome> {
  // DECISIONS.md: while its circuit is open a mapping rule is skipped without a call.
  const permit = upstream.breaker.acquire();
  if (permit === undefined) return CIRCUIT_OPEN;
  let reported = false;
  const report = (outcome: 'succeed' | 'fail' | 'release') => {
    if (reported) return;
    reported = true;
    permit[outcome]();
  };

  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, options.timeoutMs);
  const onCallerAbort = () => abort.abort();
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });

  try {
    const { statusCode, headers, body } = await upstream.pool.request({
      method: 'GET',
      path,
      // DECISIONS.md: no client credentials (the cache is shared between clients), the request id.
      headers: {
        host: upstream.origin.hostHeader,
        accept: 'application/json',
        'accept-encoding': 'identity',
        'x-request-id': options.requestId,
      },
      signal: abort.signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    // DECISIONS.md "Circuit breaker": a 5xx is a failure, any other answer a success.
    if (statusCode >= 500) report('fail');
    else report('succeed');
    if (statusCode < 200 || statusCode >= 300) {
      body.dump().catch(() => undefined);
      return { ok: false, reason: `status ${statusCode}` };
    }
    if (!isJsonContentType(headers['content-type'])) {
      body.dump().catch(() => undefined);
      return { ok: false, reason: `non-JSON content-type ${String(headers['content-type'])}` };
    }
    const read = await readLimited(body, options.maxBytes);
    if (read.overflow) {
      body.destroy();
      return { ok: false, reason: `body larger than ${options.maxBytes} bytes` };
    }
    const decoded = await decodeBody(Buffer.concat(read.chunks, read.size), headers['content-encoding'], options.maxBytes);
    const text = decoded === undefined ? undefined : utf8Text(decoded);
    if (text === undefined) return { ok: false, reason: 'undecodable body' };
    const json = text.trim();
    if (!isValidJson(json)) return { ok: false, reason: 'non-JSON body' };
    return { ok: true, json };
  } catch (err) {
    if (timedOut) {
      report('fail');
      return { ok: false, reason: 'timeout' };
    }
    if (options.signal?.aborted === true) {
      // The client left: nobody waits for this answer, and the backend is not to blame.
      report('release');
      return { ok: false, reason: 'aborted' };
    }
    const kind = classifyUpstreamError(err).kind;
    report('fail');
    return { ok: false, reason: kind === 'other' ? `error ${(err as { code?: string }).code ?? String(err)}` : kind };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/** Validation only: the text itself is what gets inserted, so nothing is lost in a round trip. */
function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
