import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { ERRORS } from './errors.js';
import {
  GRPC_STATUS_OF,
  GrpcStatus,
  encodeGrpcMessage,
  grpcStatusOfHttp,
  isGrpcContentType,
  sendGrpcError,
} from './grpc-status.js';
import { answerAsGrpc } from './grpc-status.js';
import { sendError } from './send-error.js';

/** A response that records what a writer did with it. */
function recordingResponse(headersSent = false) {
  const seen = { headers: {} as Record<string, unknown>, trailers: undefined as unknown, ended: false, status: 0 };
  const res = {
    headersSent,
    destroyed: false,
    writableEnded: false,
    set statusCode(s: number) {
      seen.status = s;
    },
    setHeader: (name: string, value: unknown) => (seen.headers[name] = value),
    addTrailers: (t: unknown) => (seen.trailers = t),
    writeHead: () => assert.fail('a gRPC status is never written with writeHead (it would not end the stream)'),
    end: () => (seen.ended = true),
    destroy: () => assert.fail('a gRPC answer is ended with a status, not cut'),
  };
  return { res: res as unknown as ServerResponse, seen };
}

describe('gateway errors as gRPC statuses', () => {
  it('docs/errors.md lists the gRPC status of every code, as the mapping has it', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## gRPC status'));
    const rows = new Map<string, number>();
    for (const m of section.matchAll(/^\| `(GW_[A-Z_]+)` \| (\d+) ([A-Z_]+) \|/gm)) {
      rows.set(m[1]!, Number(m[2]));
      assert.equal(GrpcStatus[m[3] as keyof typeof GrpcStatus], Number(m[2]), m[1]);
    }
    assert.deepEqual([...rows.keys()].sort(), Object.keys(ERRORS).sort());
    for (const [code, status] of Object.entries(GRPC_STATUS_OF)) assert.equal(rows.get(code), status, code);
  });

  it('maps the codes users expect', () => {
    assert.equal(GRPC_STATUS_OF.GW_AUTH_MISSING, 16);
    assert.equal(GRPC_STATUS_OF.GW_AUTH_FORBIDDEN, 7);
    assert.equal(GRPC_STATUS_OF.GW_RATE_LIMITED, 8);
    assert.equal(GRPC_STATUS_OF.GW_CIRCUIT_OPEN, 14);
    assert.equal(GRPC_STATUS_OF.GW_UPSTREAM_TIMEOUT, 4);
    assert.equal(GRPC_STATUS_OF.GW_UPSTREAM_UNREACHABLE, 14);
    assert.equal(GRPC_STATUS_OF.GW_ROUTE_NOT_FOUND, 12);
    assert.equal(GRPC_STATUS_OF.GW_BODY_TOO_LARGE, 8);
    assert.equal(GRPC_STATUS_OF.GW_INTERNAL, 13);
  });

  it('an answer not yet started: Trailers-Only (200, application/grpc, the status as headers, no body)', () => {
    const { res, seen } = recordingResponse();
    sendGrpcError(res, 'GW_RATE_LIMITED', { 'retry-after': 3 });
    assert.equal(seen.status, 200);
    assert.deepEqual(seen.headers, {
      'content-type': 'application/grpc',
      'retry-after': 3,
      'grpc-status': '8',
      'grpc-message': 'Too many requests',
      'x-portico-error': 'GW_RATE_LIMITED',
    });
    assert.equal(seen.ended, true);
  });

  it('an answer already started: the status as trailers', () => {
    const { res, seen } = recordingResponse(true);
    sendGrpcError(res, 'GW_UPSTREAM_UNREACHABLE');
    assert.deepEqual(seen.trailers, {
      'grpc-status': '14',
      'grpc-message': 'Backend service unreachable',
      'x-portico-error': 'GW_UPSTREAM_UNREACHABLE',
    });
    assert.equal(seen.ended, true);
  });

  it('sendError answers a marked response as a gRPC status, and leaves others in JSON', () => {
    const { res, seen } = recordingResponse();
    answerAsGrpc(res);
    sendError(res, 'GW_AUTH_MISSING');
    assert.equal(seen.headers['grpc-status'], '16');
    assert.equal(seen.headers['grpc-message'], 'Missing bearer token');
  });

  it('grpc-message is percent-encoded outside printable ASCII, and % itself', () => {
    assert.equal(encodeGrpcMessage('plain text: ok'), 'plain text: ok');
    assert.equal(encodeGrpcMessage('100% sure'), '100%25 sure');
    assert.equal(encodeGrpcMessage('é\n'), '%C3%A9%0A');
  });

  it('tells gRPC content types apart', () => {
    for (const t of ['application/grpc', 'application/grpc+proto', 'application/grpc;charset=x', 'APPLICATION/GRPC'])
      assert.equal(isGrpcContentType(t), true, t);
    for (const t of [undefined, 'application/grpc-web', 'application/json', 'application/grpcx'])
      assert.equal(isGrpcContentType(t), false, String(t));
  });

  it("an answer without a gateway code gets the client's fallback table status", () => {
    assert.equal(grpcStatusOfHttp(401), 16);
    assert.equal(grpcStatusOfHttp(403), 7);
    assert.equal(grpcStatusOfHttp(503), 14);
    assert.equal(grpcStatusOfHttp(418), 2);
  });
});
