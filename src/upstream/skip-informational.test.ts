import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { skipInformational } from './skip-informational.js';

const HEAD = 'GET /a HTTP/1.1\r\nhost: b\r\n\r\n';
const FINAL = 'HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nbody';

/** A socket-like stream: what the test pushes is what `read()` finds, as undici reads it. */
function fakeSocket(): Duplex {
  return new Duplex({ read() {}, write: (_chunk, _enc, done) => done() });
}

/** Pushes `parts` one at a time and reads after each, as undici's parser does on 'readable'. */
function readThrough(socket: Duplex, parts: readonly string[]): string {
  let seen = '';
  for (const part of parts) {
    socket.push(Buffer.from(part, 'latin1'));
    for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null)
      seen += chunk.toString('latin1');
  }
  return seen;
}

function withSkip(): Duplex {
  const socket = fakeSocket();
  skipInformational(socket as unknown as Socket);
  socket.write(HEAD);
  return socket;
}

describe('skipInformational', () => {
  it('drops 1xx heads before the answer, split at every byte', () => {
    const bytes = `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 102\r\n\r\n${FINAL}`;
    for (let at = 1; at < bytes.length; at++) {
      assert.equal(readThrough(withSkip(), [bytes.slice(0, at), bytes.slice(at)]), FINAL, `split at ${at}`);
    }
    assert.equal(readThrough(withSkip(), [...bytes]), FINAL, 'one byte at a time');
  });

  it('never looks inside a body, and looks again after the next request head', () => {
    const socket = withSkip();
    assert.equal(readThrough(socket, [FINAL]), FINAL);
    // Body chunks and chunk framing written meanwhile are not request heads.
    socket.write(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    socket.write('\r\n5\r\n');
    assert.equal(readThrough(socket, ['HTTP/1.1 100 Continue\r\n\r\n']), 'HTTP/1.1 100 Continue\r\n\r\n');
    socket.write(HEAD);
    assert.equal(readThrough(socket, ['HTTP/1.1 100 Continue\r\n\r\n', FINAL]), FINAL);
  });

  it('leaves a 101, a final answer and bytes that are not HTTP as they are', () => {
    for (const answer of [
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n',
      'HTTP/1.1 200 OK\r\n\r\n',
      'HTTP/1.1 1000 Nope\r\n\r\n',
      'HTTP/2.0 100 Continue\r\n\r\n',
      'SSH-2.0-OpenSSH_9.6\r\n',
    ]) {
      assert.equal(readThrough(withSkip(), [answer]), answer);
    }
  });

  it('holds an incomplete 1xx head only up to the head limit, then hands it on', () => {
    const huge = `HTTP/1.1 100 Continue\r\nX: ${'a'.repeat(20 * 1024)}`;
    assert.equal(readThrough(withSkip(), [huge]), huge);
    assert.equal(readThrough(withSkip(), ['HTTP/1.1 100 Continue\r\nX: a']), '');
  });
});
