import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { afterAnswersBefore, sendOnSocket, responseHead } from './socket-response.js';
import { RecordingSocket } from '../../test/support/recording-socket.js';

describe('responseHead', () => {
  it('writes the status line with the standard reason, then each header, repeated for lists', () => {
    assert.equal(
      responseHead(401, {
        'content-type': 'application/json',
        'content-length': 2,
        'set-cookie': ['a=1', 'b=2'],
        skipped: undefined,
      }),
      'HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 2\r\nset-cookie: a=1\r\nset-cookie: b=2\r\n\r\n',
    );
  });

  it('takes a flat raw header list and a custom reason', () => {
    assert.equal(
      responseHead(101, ['Upgrade', 'websocket', 'Connection', 'Upgrade'], 'Switching Protocols'),
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
    );
  });
});

describe('sendOnSocket', () => {
  it('writes head and body with connection: close, then ends and closes the socket', async () => {
    const socket = new RecordingSocket();
    sendOnSocket(socket, 404, { 'content-type': 'application/json', 'content-length': 2 }, Buffer.from('{}'));
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
    sendOnSocket(socket, 500, {}, Buffer.from('x'));
    assert.equal(socket.written.length, 0);
  });
});

describe('afterAnswersBefore', () => {
  /** A response as Node attaches it to the socket: finishing hands the socket to the next one. */
  function pipeline(
    socket: RecordingSocket & { _httpMessage?: unknown },
    reqs: object[],
  ): (EventEmitter & { req: object; headersSent: boolean })[] {
    const responses = reqs.map((req) => Object.assign(new EventEmitter(), { req, headersSent: false }));
    responses.forEach((res, i) => res.on('finish', () => (socket._httpMessage = responses[i + 1] ?? null)));
    socket._httpMessage = responses[0];
    return responses;
  }

  it('waits for every earlier answer, in order, then runs once', () => {
    const socket = new RecordingSocket() as RecordingSocket & { _httpMessage?: unknown };
    const [one, two] = pipeline(socket, [{}, {}]);
    const calls: unknown[] = [];
    afterAnswersBefore(socket, undefined, (current) => calls.push(current));
    assert.equal(calls.length, 0);
    one!.emit('finish');
    assert.equal(calls.length, 0);
    two!.emit('finish');
    assert.deepEqual(calls, [undefined]);
  });

  it('stops at the response of the broken request and hands it over', () => {
    const socket = new RecordingSocket() as RecordingSocket & { _httpMessage?: unknown };
    const broken = {};
    const [one, mine] = pipeline(socket, [{}, broken]);
    let got: unknown;
    afterAnswersBefore(socket, broken, (current) => (got = current));
    assert.equal(got, undefined);
    one!.emit('finish');
    assert.equal(got, mine);
  });

  it('runs at once on a socket with no answer in flight', () => {
    let ran = false;
    afterAnswersBefore(new RecordingSocket(), undefined, () => (ran = true));
    assert.ok(ran);
  });
});
