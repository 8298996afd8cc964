/**
 * The endpoint of a standard route whose plugins transform JSON answers (`onResponseBody`,
 * docs/plugins.md#transforming-a-json-response). The request goes out like a standard route's; a
 * 2xx answer labelled JSON is buffered (up to the plugins' limit), decoded, parsed and handed to
 * each plugin in turn, and what they return goes out with its own Content-Length. Any other answer
 * streams as on a standard route, untouched. An answer past the limit, or one that does not
 * decode or parse, is not relayed at all (502): a plugin that redacts is never bypassed.
 */
import type { CompiledRoute, Exchange, Step } from '../pipeline/types.js';
import type { ErrorCode } from '../response/errors.js';
import { sendError } from '../response/send-error.js';
import { createRouteCall, type RouteCall } from '../upstream/call/route-call.js';
import { decodeBody, utf8Text } from '../upstream/call/read-body.js';
import { BufferedJsonCall, describeNewBody } from './buffered-json-call.js';
import { forwardEndpoint, type ForwardOptions } from './forward.js';

/** Runs the route's `onResponseBody` plugins: the new body, or undefined when they changed nothing or answered. */
export type RunBodyPlugins = (
  ex: Exchange,
  status: number,
  headers: Record<string, string | string[]>,
  json: unknown,
) => Promise<Buffer | undefined | 'answered'>;

export interface JsonTransformOptions extends ForwardOptions {
  /** The most the answer may weigh, encoded and decoded: the smallest limit of the route's plugins. */
  readonly maxBodyBytes: number;
  readonly runPlugins: RunBodyPlugins;
}

/** Builds the endpoint of one route (once, at config load). */
export function jsonTransformEndpoint(route: CompiledRoute, options: JsonTransformOptions): Step {
  // The body is parsed: asked for as the backend stores it (a compressing one is decoded anyway).
  const call = createRouteCall(route, { ...options, identityEncoding: true });
  // HEAD has no body to transform: it is a standard forward.
  const forwardHead = forwardEndpoint(route, options);
  return (ex) => {
    if (ex.req.method === 'HEAD') return forwardHead(ex);
    return new Promise<void>((resolve) => new TransformCall(ex, call, resolve, options).start());
  };
}

/** Refuses the answer: the gateway's 502 goes out and the backend's answer is dropped. */
function refuse(ex: Exchange, code: ErrorCode): void {
  ex.errorCode = code;
  sendError(ex.res, code);
}

class TransformCall extends BufferedJsonCall {
  constructor(
    ex: Exchange,
    call: RouteCall,
    resolve: () => void,
    private readonly options: JsonTransformOptions,
  ) {
    super(ex, call, resolve, options.maxBodyBytes);
  }

  /** Only an answer labelled JSON: one without a type streams untouched. */
  protected override wantsBody(status: number, headers: Record<string, string | string[]>): boolean {
    return headers['content-type'] !== undefined && super.wantsBody(status, headers);
  }

  protected tooLarge(ex: Exchange): boolean {
    refuse(ex, 'GW_PLUGIN_RESPONSE_TOO_LARGE');
    return this.dropAnswer();
  }

  protected useBody(ex: Exchange, body: Buffer): void {
    void this.transform(ex, body).finally(() => this.settle());
  }

  private async transform(ex: Exchange, raw: Buffer): Promise<void> {
    const { status, headers } = this;
    const decoded = await decodeBody(raw, headers['content-encoding'], this.options.maxBodyBytes);
    const json = decoded === undefined ? undefined : parseJson(decoded);
    if (json === undefined) return refuse(ex, 'GW_PLUGIN_RESPONSE_INVALID');
    const body = await this.options.runPlugins(ex, status, headers, json.value);
    if (body === 'answered' || ex.res.destroyed) return;
    if (body !== undefined) describeNewBody(headers, body.length);
    try {
      ex.res.writeHead(status, headers);
    } catch {
      // A header Node refuses to send (the plugins' values are checked; the backend's may not be).
      return refuse(ex, 'GW_PLUGIN_RESPONSE_INVALID');
    }
    ex.res.end(body ?? raw);
  }
}

/** The parsed JSON, or undefined when the body is not UTF-8 JSON. */
function parseJson(body: Buffer): { value: unknown } | undefined {
  const text = utf8Text(body);
  if (text === undefined) return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}
