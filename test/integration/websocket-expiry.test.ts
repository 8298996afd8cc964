/**
 * A WebSocket tunnel lives no longer than the token that opened it (`auth.closeWebSocketsAtExpiry`,
 * on by default): when the verified token's `exp` passes, the client gets a close frame 1008
 * "token expired" and the backend connection closes. Tokens here expire about a second after they
 * are signed (`exp` counts whole seconds), so each test waits at most that long.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { request } from 'undici';
import type { WebSocket } from 'ws';
import { gatewayForSuite } from '../support/suite-gateway.js';
import { bounded, openWebSocket, startWsBackend, type WsBackend } from '../support/ws-backend.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';

/** A token whose `exp` is the first whole second at least 300 ms away: the tunnel opens before it. */
async function shortToken(): Promise<{ token: string; expMs: number }> {
  const exp = Math.ceil((Date.now() + 300) / 1000);
  const token = await new SignJWT({ sub: 'alice' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(SECRET));
  return { token, expMs: exp * 1000 };
}

/** The next message `ws` receives, as text. */
function nextMessage(ws: WebSocket): Promise<string> {
  return bounded(
    new Promise((resolve) => ws.once('message', (data: Buffer) => resolve(data.toString('utf8')))),
    3_000,
    'message',
  );
}

/** The close `ws` sees, and when. */
function nextClose(ws: WebSocket): Promise<{ code: number; reason: string; at: number }> {
  return bounded(
    new Promise((resolve) =>
      ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString(), at: Date.now() })),
    ),
    3_000,
    'client close',
  );
}

function gatewayYaml(backend: WsBackend, auth: string): string {
  return `
routes:
  - { method: GET, route: /chat, service: ${backend.host}, path: /echo, isWebSocket: true }
config:
  auth: { secret: ${SECRET}, defaultProtected: true${auth} }
`;
}

describe('a WebSocket tunnel closes when its token expires', () => {
  const s = gatewayForSuite((backend) => gatewayYaml(backend, ''), startWsBackend);

  it('at exp, by default: the client gets 1008 "token expired", the backend connection closes, the stream is counted closed', async () => {
    const { token, expMs } = await shortToken();
    const backendSide = s.backend.nextConnection();
    const { ws } = await openWebSocket(`ws://127.0.0.1:${s.gw.port}/api/chat`, undefined, {
      headers: { authorization: `Bearer ${token}` },
    });
    await backendSide;
    const closed = nextClose(ws);
    const backendClosed = s.backend.nextClose();
    ws.send('before exp');
    assert.equal(await nextMessage(ws), 'before exp', 'the tunnel works until then');
    const close = await closed;
    assert.deepEqual({ code: close.code, reason: close.reason }, { code: 1008, reason: 'token expired' });
    assert.ok(close.at >= expMs - 20, `closed ${expMs - close.at} ms before exp`);
    // The gateway closes the backend's connection without a close frame of its own (it cannot
    // write one: the client's bytes may stop mid-frame), as when a client vanishes.
    assert.equal((await backendClosed).code, 1006);
    const metrics = await (await request(`${s.gw.url}/metrics`)).body.text();
    assert.match(metrics, /^portico_open_streams\{route="\/chat",kind="websocket"\} 0$/m);
    assert.ok(s.gw.logs.some((l) => l.msg === 'websocket tunnel closed' && l.reason === 'token expired'));
  });
});

describe('auth.closeWebSocketsAtExpiry: false', () => {
  const s = gatewayForSuite((backend) => gatewayYaml(backend, ', closeWebSocketsAtExpiry: false'), startWsBackend);

  it('leaves the tunnel open past exp (the token was checked at the upgrade only)', async () => {
    const { token, expMs } = await shortToken();
    const { ws } = await openWebSocket(`ws://127.0.0.1:${s.gw.port}/api/chat`, undefined, {
      headers: { authorization: `Bearer ${token}` },
    });
    let closed = false;
    ws.once('close', () => (closed = true));
    // Nothing to await here but the clock: the tunnel must still be there once exp has passed.
    await waitFor(() => Date.now() > expMs + 300, 3_000, 'exp passed');
    ws.send('after exp');
    assert.equal(await nextMessage(ws), 'after exp');
    assert.equal(closed, false);
    ws.close(1000);
  });
});
