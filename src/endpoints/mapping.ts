/**
 * The endpoint of routes with mapping rules or field rules (`response.allow/deny/rename`). The
 * request goes to the backend like a standard route; a 2xx JSON answer (an object or an array of
 * objects) is buffered and shaped (shape-json.ts: mapping calls, splicing, field rules). Anything
 * else is relayed unchanged (docs/design-decisions.md "Response mapping").
 */
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import type { Logger } from '../observability/logger.js';
import { BufferedJsonCall, describeNewBody } from './buffered-json-call.js';
import { createRouteCall, type RouteCall } from '../upstream/call/route-call.js';
import { forwardEndpoint, type ForwardOptions } from './forward.js';
import { decodeBody, utf8Text } from '../upstream/call/read-body.js';
import { createJsonShaper } from '../mapping/shape-json.js';
import type { JsonShapingOptions } from '../mapping/types.js';
import { answerCompleted } from '../response/answer-completed.js';
import { CallerLeft, type CallerSignal } from '../upstream/call/caller-signal.js';

export { createJsonShaper, type ShapeJson } from '../mapping/shape-json.js';
export type { JsonShapingOptions } from '../mapping/types.js';

export interface MappingEndpointOptions extends ForwardOptions, JsonShapingOptions {}

/** Builds the mapping endpoint of one route (once, at config load). */
export function mappingEndpoint(route: CompiledRoute, options: MappingEndpointOptions): Step {
  const { maxBodyBytes, logger } = options;
  // The body is parsed: asked for as the backend stores it (a compressing one is decoded by body.ts).
  const call = createRouteCall(route, { ...options, identityEncoding: true });
  const shape = createJsonShaper(route, options);
  // HEAD has no body to enrich: it is a standard forward.
  const forwardHead = forwardEndpoint(route, options);

  /** The answer's body once shaped, or undefined when it is to be returned unchanged. */
  async function transform(
    ex: Exchange,
    raw: Buffer,
    contentEncoding: string | string[] | undefined,
    signal: CallerSignal,
  ): Promise<string | undefined> {
    const decoded = await decodeBody(raw, contentEncoding, maxBodyBytes);
    if (decoded === undefined) return undefined;
    const text = utf8Text(decoded);
    if (text === undefined) return undefined;
    return shape(ex, text, decoded.length, signal);
  }

  /** Answers with the buffered primary body, enriched when its mapping calls allow. */
  async function sendEnriched(
    ex: Exchange,
    status: number,
    headers: Record<string, string | string[]>,
    raw: Buffer,
    signal: CallerSignal,
  ): Promise<void> {
    const { res } = ex;
    // Sent as the string it is: Node writes the head and a string body in one write, where a
    // Buffer would be one more copy of the body and a second buffer in the socket's writev.
    let enriched: string | undefined;
    try {
      enriched = await transform(ex, raw, headers['content-encoding'], signal);
    } catch (err) {
      // The primary response is always returned, whatever went wrong while enriching.
      logger.error(
        { reqId: ex.requestId, route: route.id, err },
        'mapping failed with an error; primary body returned unchanged',
      );
    }
    if (res.destroyed) return;
    if (enriched !== undefined) describeNewBody(headers, Buffer.byteLength(enriched));
    res.writeHead(status, headers);
    res.end(enriched ?? raw);
  }

  const mapped: MappedAnswer = { maxBodyBytes, sendEnriched, logger };
  return (ex) => {
    // HEAD has no body to enrich: it is a standard forward.
    if (ex.req.method === 'HEAD') return forwardHead(ex);
    return new Promise<void>((resolve) => new PrimaryCall(ex, call, resolve, mapped).start());
  };
}

/** What a primary call hands its buffered answer to (made once per route). */
interface MappedAnswer {
  /** `limits.maxMappingBodyBytes`: larger bodies are relayed unchanged. */
  readonly maxBodyBytes: number;
  /** Enriches and answers; `signal` aborts when the client leaves. */
  sendEnriched(
    ex: Exchange,
    status: number,
    headers: Record<string, string | string[]>,
    raw: Buffer,
    signal: CallerSignal,
  ): Promise<void>;
  readonly logger: Logger;
}

/**
 * The primary call of a mapped route: an answer that can be enriched is buffered (up to
 * `maxBodyBytes`) and handed to the enrichment once complete; any other answer, or one that
 * outgrows the bound, is relayed as it comes, what was buffered first.
 */
class PrimaryCall extends BufferedJsonCall {
  /** Aborted when the client leaves during enrichment: the mapping calls made only for it stop. */
  private mappings: CallerLeft | undefined;

  constructor(
    ex: Exchange,
    call: RouteCall,
    resolve: () => void,
    private readonly mapped: MappedAnswer,
  ) {
    super(ex, call, resolve, mapped.maxBodyBytes);
  }

  /** Too large to enrich: relayed unchanged. */
  protected tooLarge(ex: Exchange, buffered: Buffer[], chunk: Buffer | undefined): boolean {
    return this.relayUnchanged(ex, buffered, chunk);
  }

  protected useBody(ex: Exchange, body: Buffer): void {
    // Every uncached mapping call of the response listens to it.
    const mappings = new CallerLeft();
    this.mappings = mappings;
    const { mapped } = this;
    mapped
      .sendEnriched(ex, this.status, this.headers, body, mappings)
      .catch((err: unknown) => {
        mapped.logger.error({ reqId: ex.requestId, route: ex.route.id, err }, 'mapped answer failed');
        if (!ex.res.writableEnded) ex.res.destroy();
      })
      .finally(() => this.settle());
  }

  /** A client that leaves releases the backend connection and the calls made only for it. */
  protected override clientClosed(): void {
    // Called for every closed response: an answered client has nothing left to cancel.
    if (this.ex === undefined || answerCompleted(this.ex.res)) return;
    this.mappings?.leave();
    super.clientClosed();
  }
}
