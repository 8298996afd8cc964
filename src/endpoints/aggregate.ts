/**
 * The endpoint of aggregated routes (`backends:`, docs/aggregation.md): every backend is called
 * at once, each answer is shaped (target, allow/deny/rename, group) and merged into one JSON
 * object (merge.ts), and the route's own mapping and field rules then apply to the merged object.
 *
 * Each backend call is a JSON call (upstream/call/json-call.ts) under its origin's circuit, within
 * `timeouts.backendSec`, its answer bounded by `limits.maxMappingBodyBytes`, with the headers a
 * plain route's backend gets (client headers less the drop set, claim headers, the route's header
 * rules, request id, trace context) but no body: the route is a GET.
 *
 * Answers: 200 with `X-Portico-Completed: true` when every backend answered a 2xx JSON body;
 * 200 with `X-Portico-Completed: false` and an 'aggregate:incomplete' event (logged, counted) when
 * some did not; 502 `GW_AGGREGATE_FAILED` when none did.
 */
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import { backendHeaders, type RouteCall } from '../upstream/call/route-call.js';
import type { RequestDropSet } from '../upstream/trust-boundary.js';
import { editHeaderRecord } from '../upstream/headers/header-edits.js';
import { callJson, type JsonCallObserver } from '../upstream/call/json-call.js';
import { type JsonOutcome } from '../upstream/types.js';
import { appendQuery } from '../upstream/target-url.js';
import { createJsonShaper, type JsonShapingOptions } from './mapping.js';
import { sendError } from '../response/send-error.js';
import { mergeAnswers, shapeAnswer, type Shaped } from '../mapping/merge.js';
import { answerCompleted } from '../response/answer-completed.js';

export interface AggregateOptions extends JsonShapingOptions {
  /** Client headers never forwarded: the route's set, which keeps ranges and body headers (upstream/trust-boundary.ts). */
  readonly dropHeaders: RequestDropSet;
  /** `timeouts.backendSec` in milliseconds, per backend call. */
  readonly timeoutMs: number;
}

/** Builds the endpoint of one aggregated route (once, at config load). */
export function aggregateEndpoint(route: CompiledRoute, options: AggregateOptions): Step {
  const { events, logger, maxBodyBytes, timeoutMs } = options;
  const dropHeaders = options.dropHeaders;
  const backends = route.backends;
  const calls = backends.map((b): Pick<RouteCall, 'route' | 'upstream' | 'dropHeaders' | 'identityEncoding'> => ({
    route,
    upstream: options.upstreams.forOrigin(b.origin),
    dropHeaders,
    identityEncoding: true,
  }));
  const observer: JsonCallObserver = { events, routeId: route.id, call: 'backend' };
  const shape =
    route.mapping.length > 0 || route.filterResponse !== undefined ? createJsonShaper(route, options) : undefined;
  const editResponse = route.editHeaders.response;

  function callBackend(ex: Exchange, source: HeaderSource, i: number, signal: AbortSignal): Promise<JsonOutcome> {
    const b = backends[i]!;
    const call = calls[i]!;
    return callJson(call.upstream, appendQuery(b.buildPath(ex.params), b.path, ex.rawQuery), {
      requestId: ex.requestId,
      timeoutMs,
      maxBytes: maxBodyBytes,
      signal,
      observer,
      retries: route.retries,
      headers: backendHeaders(call, source),
    });
  }

  return async (ex) => {
    const abort = new AbortController();
    // A client that leaves stops the calls made only for it.
    ex.onClose = () => {
      if (!answerCompleted(ex.res)) abort.abort();
    };
    const source = headerSource(ex);
    const outcomes = await Promise.all(backends.map((_, i) => callBackend(ex, source, i, abort.signal)));
    const { res } = ex;
    if (abort.signal.aborted || res.destroyed) {
      ex.upstreamFailure = 'aborted';
      return;
    }
    const parts: Shaped[] = outcomes.map((o, i) => (o.ok ? shapeAnswer(backends[i]!, o.json) : o));
    const failed = failures(backends, parts);
    if (failed.length > 0)
      events.emit('aggregate:incomplete', { requestId: ex.requestId, routeId: route.id, total: parts.length, failed });
    if (failed.length === parts.length) {
      ex.upstreamFailure = 'other';
      ex.errorCode = 'GW_AGGREGATE_FAILED';
      sendError(res, 'GW_AGGREGATE_FAILED');
      return;
    }
    ex.upstreamStatus = 200;
    let text = mergeAnswers(backends, parts);
    if (shape !== undefined) {
      try {
        text = (await shape(ex, text, Buffer.byteLength(text), abort.signal)) ?? text;
      } catch (err) {
        // The merged answer is still returned, whatever went wrong while mapping it.
        logger.error(
          { reqId: ex.requestId, route: route.id, err },
          'mapping failed with an error; merged body returned unmapped',
        );
      }
      if (res.destroyed) return;
    }
    sendMerged(ex, text, failed.length === 0, editResponse);
  };
}

/** What each backend's headers are built from: the exchange, without its body (none is sent). */
type HeaderSource = Parameters<typeof backendHeaders>[1];

function headerSource(ex: Exchange): HeaderSource {
  return {
    req: ex.req,
    requestId: ex.requestId,
    claimHeaders: ex.claimHeaders,
    claims: ex.claims,
    params: ex.params,
    body: undefined,
    upstreamEdits: ex.upstreamEdits,
  };
}

/** The backends whose answer is missing from the merged one, for the 'aggregate:incomplete' event. */
function failures(backends: CompiledRoute['backends'], parts: readonly Shaped[]) {
  return parts.flatMap((p, i) => (p.ok ? [] : [{ backend: i, service: backends[i]!.service, reason: p.reason }]));
}

/** Writes the merged answer, saying whether every backend is in it, with the route's response header rules. */
function sendMerged(
  ex: Exchange,
  text: string,
  completed: boolean,
  editResponse: CompiledRoute['editHeaders']['response'],
): void {
  const body = Buffer.from(text, 'utf8');
  const headers: Record<string, string | string[]> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(body.length),
    'x-portico-completed': completed ? 'true' : 'false',
    'x-request-id': ex.requestId,
  };
  if (editResponse !== undefined) editHeaderRecord(editResponse, headers, ex);
  ex.res.writeHead(200, headers);
  ex.res.end(body);
}
