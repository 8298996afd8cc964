/**
 * Request header building (src/upstream/headers/forward-headers.ts upstreamRequestHeaders) for a typical
 * browser-like request of 12 headers, with and without claim headers from auth. The request is
 * a fake with just the fields the function reads (rawHeaders, headers, socket).
 * Standalone: `node --import tsx bench/micro/forward-headers.ts`.
 */
import type { IncomingMessage } from 'node:http';
import { DEFAULT_STRIP_HEADERS } from '../../src/config/schema.js';
import { upstreamRequestHeaders, type ForwardContext } from '../../src/upstream/headers/forward-headers.js';
import { requestDropSet } from '../../src/upstream/trust-boundary.js';
import { isMain, measure, runStandalone, type MicroSuite } from './measure.js';

const RAW = [
  'Host',
  'gateway.example.test',
  'User-Agent',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  'Accept',
  'application/json, text/plain, */*',
  'Accept-Language',
  'en-GB,en;q=0.9',
  'Accept-Encoding',
  'gzip, deflate, br',
  'Connection',
  'keep-alive',
  'Authorization',
  'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl',
  'Cookie',
  'session=abc123; theme=dark',
  'X-userId',
  'forged',
  'traceparent',
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  'Referer',
  'https://app.example.test/orders',
  'Cache-Control',
  'no-cache',
];

/** An IncomingMessage-like object with the fields upstreamRequestHeaders reads. */
function fakeRequest(): IncomingMessage {
  const headers: Record<string, string> = {};
  for (let i = 0; i < RAW.length; i += 2) headers[RAW[i]!.toLowerCase()] = RAW[i + 1]!;
  return { rawHeaders: RAW, headers, socket: { remoteAddress: '10.1.2.3' } } as unknown as IncomingMessage;
}

export const suite: MicroSuite = {
  title: 'request header building (upstreamRequestHeaders, 12 client headers)',
  run(budget) {
    const req = fakeRequest();
    const dropTraced = requestDropSet(DEFAULT_STRIP_HEADERS, true);
    const dropPlain = requestDropSet(DEFAULT_STRIP_HEADERS, false);
    const anon: ForwardContext = { req, requestId: 'req-1', hostHeader: '127.0.0.1:8080', claimHeaders: undefined };
    const authed: ForwardContext = {
      ...anon,
      claimHeaders: [
        ['X-userId', '42'],
        ['X-role', 'admin'],
        ['X-sub', '42'],
      ],
    };
    const out = upstreamRequestHeaders(authed, dropTraced);
    if (out.includes('forged') || !out.includes('42')) throw new Error('claim headers did not replace the forged one');
    return [
      measure('no claims, trace propagation off', () => upstreamRequestHeaders(anon, dropPlain), budget),
      measure('no claims, trace propagation on', () => upstreamRequestHeaders(anon, dropTraced), budget),
      measure('3 claim headers, trace propagation on', () => upstreamRequestHeaders(authed, dropTraced), budget),
    ];
  },
};

if (isMain(import.meta.url)) await runStandalone(suite);
