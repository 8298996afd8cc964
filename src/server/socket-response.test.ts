import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { respondOnSocket, responseHead } from './socket-response.js';
import { RecordingSocket } from '../../test/support/recording-socket.js';


describe('responseHead', () => {
  it('writes the status line with the standard reason, then each header, repeated for lists', () => {
    assert.equal(
      responseHead(401, { 'content-type': 'application/json', 'content-length': 2, 'set-cookie': ['a=1', 'b=2'], skipped: undefined }),
      'HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 2\r\nset-cookie: a=1\r\nset-cookie: b=2\r\n\r\n',
    );
  });

  it('takes a flat raw header list and a custom reason', () => {
    assert.equal(responseHead(101, ['Upgrade', 'websocket', 'Connection', 'Upgrade'], 'Switching Protocols'), 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
  });
});

describe('respondOnSocket', () => {
  it('writes head and body with connection: close, then ends and closes the socket', async () => {
    const socket = new RecordingSocket();
    respondOnSocket(socket, 404, { 'content-type': 'application/json', 'content-length': 2 }, Buffer.from('{}'));
    await once(socket, 'close');
    const text = socket.text();
    assert.match(text, /^HTTP\/1\.1 404 Not Found\r\n/);
    assert.match(text, /\r\nconnection: close\r\n/);
    assert.match(text, /\r\ndate: .+ GMT\r\n/);
    assert.ok(text.endsWith('\r\n\r\n{}'));
  });

  it('does nothing but destroy a socket that is already gone', () => {
    const socket = new RecordingSocket();
    socket.destroy();
    respondOnSocket(socket, 500, {}, Buffer.from('x'));
    assert.equal(socket.written.length, 0);
  });
});
