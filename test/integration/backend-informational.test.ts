/**
 * A backend's 1xx informational answers before its final answer (RFC 9110 15.2: a client must
 * parse them even when it did not ask for them, and may ignore them): `100 Continue` sent
 * unsolicited, twice, split from the final head, or after a `103 Early Hints`. Every kind of
 * backend call skips them and relays the final answer, as nginx does; none reaches the client.
 * The backend is a raw TCP server, since no HTTP library sends an unsolicited 100.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { request as httpRequest } from 'node:http';
import { gatewayForSuite } from '../support/suite-gateway.js';
import { startRawBackend, type ParsedRequest, type RawBackend } from '../support/raw-backend.js';

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const HINTS = 'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n';

/** What the backend writes before its final answer, by the first segment of the path. */
const BEFORE: Record<string, string[]> = {
  once: [CONTINUE],
  twice: [CONTINUE, CONTINUE],
  // The 100 in a packet of its own, then the final head in another one.
  split: [CONTINUE.slice(0, 10), CONTINUE.slice(10)],
  'after-hints': [HINTS, CONTINUE],
  'http10-status-line': ['HTTP/1.0 100 Continue\r\nX-Info: yes\r\n\r\n'],
  none: [],
};

function final(req: ParsedRequest): string {
  const path = req.target.split('?')[0]!;
  if (path.endsWith('/events')) {
    const event = 'data: {"n":"one"}\n\n';
    const chunk = `${event.length.toString(16)}\r\n${event}\r\n`;
    return `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n${chunk}0\r\n\r\n`;
  }
  const body = JSON.stringify({ path, kind: path.split('/')[1], secret: 'hidden', id: 7 });
  return `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
}

/** Writes the 1xx parts in separate packets (each after the previous one was flushed), then the answer. */
function respond(req: ParsedRequest, socket: Socket): void {
  const parts = [...(BEFORE[req.target.split('/')[1]!] ?? []), final(req)];
  const next = (): void => {
    const part = parts.shift();
    if (part !== undefined) socket.write(part, () => setImmediate(next));
  };
  next();
}

const suite = gatewayForSuite<RawBackend>(
  (b) => `
routes:
  - { method: GET, route: "/plain/{kind}", service: ${b.host}, path: "/{kind}/plain" }
  - { method: GET, route: "/filtered/{kind}", service: ${b.host}, path: "/{kind}/filtered", response: { deny: [secret] } }
  - { method: GET, route: "/mapped/{kind}", service: ${b.host}, path: "/{kind}/mapped",
      mapping: [{ path: "/{kind}/item/{id}", service: ${b.host}, tag: item }] }
  - method: GET
    route: "/aggregated/{kind}"
    backends:
      - { service: ${b.host}, path: "/{kind}/first", deny: [secret] }
      - { service: ${b.host}, path: "/{kind}/second", group: second, allow: [path] }
  - { method: GET, route: "/sse/{kind}", service: ${b.host}, path: "/{kind}/events", isSSE: true }
config:
  timeouts: { backendSec: 3 }
`,
  () => startRawBackend(respond),
);

/** Status and body of one GET with node:http, which reports any 1xx the gateway relays ('information'). */
function getFinal(path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${suite.gw.url}${path}`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('information', (info) => reject(new Error(`a ${info.statusCode} reached the client`)));
    req.on('error', reject);
    req.end();
  });
}

describe('1xx answers from a backend before its final answer are skipped, on every route kind', () => {
  for (const kind of Object.keys(BEFORE)) {
    it(`${kind}: a plain route relays the final 200, no 1xx reaches the client`, async () => {
      const res = await getFinal(`/api/plain/${kind}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(JSON.parse(res.text), { path: `/${kind}/plain`, kind, secret: 'hidden', id: 7 });
    });

    it(`${kind}: a field-filtered route reads the final answer whole and filters it`, async () => {
      const res = await suite.gw.get(`/api/filtered/${kind}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json(), { path: `/${kind}/filtered`, kind, id: 7 });
    });

    it(`${kind}: a mapped route and its mapping call both skip the 1xx`, async () => {
      const res = await suite.gw.get(`/api/mapped/${kind}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json(), {
        path: `/${kind}/mapped`,
        kind,
        secret: 'hidden',
        id: 7,
        item: { path: `/${kind}/item/7`, kind, secret: 'hidden', id: 7 },
      });
    });

    it(`${kind}: an aggregated route merges both final answers`, async () => {
      const res = await suite.gw.get(`/api/aggregated/${kind}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json(), { path: `/${kind}/first`, kind, id: 7, second: { path: `/${kind}/second` } });
    });

    it(`${kind}: an SSE route streams the final answer's events`, async () => {
      const body = await getFinal(`/api/sse/${kind}`);
      assert.equal(body.status, 200);
      assert.equal(body.text, 'data: {"n":"one"}\n\n');
    });
  }

  it('the pooled connection stays in step: each of many calls after a 100 gets its own answer', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => suite.gw.get(`/api/plain/${i % 2 === 0 ? 'twice' : 'none'}?n=${i}`)),
    );
    answers.forEach((res, i) => {
      assert.equal(res.status, 200, res.text);
      assert.equal((res.json() as { path: string }).path, `/${i % 2 === 0 ? 'twice' : 'none'}/plain`);
    });
  });
});
