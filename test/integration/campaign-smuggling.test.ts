/**
 * Request smuggling campaign, client side: about 200 byte streams a client can send (Transfer-
 * Encoding mutations alone and with Content-Length, Content-Length variants, chunk sizes and
 * extensions, bare LF, pipelining), each ending with an attempt to slip in a request to
 * /api/smuggled. The reference is RFC 9112 read strictly (test/support/raw-backend.ts
 * `parseAllStrict`). Pass, for every stream:
 * - the requests the backend receives are a prefix of the strict reading (same method, target and
 *   body, in order): the gateway never forwards a request the client did not send as one;
 * - the client's answers match: the n-th 200 echoes the n-th request, anything after is the
 *   gateway's JSON error; the connection then closes.
 * Streams marked `valid` must be forwarded whole, so a gateway refusing everything fails too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { parseAllStrict, startRawBackend, type RawBackend } from '../support/raw-backend.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { closeAll } from '../support/close-all.js';

/** Upper bound for one stream's exchange on the loopback (each takes milliseconds). */
const CASE_MS = 5_000;
/** How long a stream the gateway keeps open after its last answer gets before the client closes. */
const SETTLE_MS = 1_000;

const SMUGGLE = 'GET /api/smuggled HTTP/1.1\r\nHost: gw.test\r\n\r\n';
const CHUNKED_BODY = '5\r\nhello\r\n0\r\n\r\n';
const post = (headerLines: string, body: string) =>
  `POST /api/p HTTP/1.1\r\nHost: gw.test\r\n${headerLines}\r\n${body}`;

interface Case {
  readonly name: string;
  readonly bytes: string;
  /**
   * true: the strict reading accepts every request and the gateway must forward them all.
   * 'stricter': the strict reading accepts it but Node refuses (safe: nothing is forwarded that
   * the client did not send as a request). A list: the requests a reading more lenient than the
   * strict one finds, with the same boundaries (what Node forwards, normalised).
   * Absent: the strict reading refuses the stream somewhere.
   */
  readonly valid?: true | 'stricter' | readonly string[];
}

/** Transfer-Encoding values: case, whitespace, lists, quotes, near misses, control bytes. */
const TE_VALUES: [string, Case['valid']][] = [
  ['chunked', true],
  ['Chunked', true],
  ['CHUNKED', true],
  ['cHuNkEd', true],
  [' chunked', true],
  ['chunked ', true],
  ['\tchunked', true],
  ['chunked\t', 'stricter'],
  ['  chunked  ', true],
  // Trailing HTAB is optional whitespace (RFC 9110 5.5), yet Node refuses it: stricter, safe.
  ['\vchunked', undefined],
  ['chunked\v', undefined],
  ['\fchunked', undefined],
  ['chunked\f', undefined],
  ['\xa0chunked', undefined],
  ['chunked\xa0', undefined],
  ['chunked, chunked', undefined],
  ['chunked,chunked', undefined],
  ['identity, chunked', undefined],
  ['identity,chunked', undefined],
  ['gzip, chunked', undefined],
  ['deflate, chunked', undefined],
  ['compress, chunked', undefined],
  ['chunked, identity', undefined],
  ['chunked, gzip', undefined],
  [',chunked', undefined],
  ['chunked,', undefined],
  [', chunked', undefined],
  ['chunked ,', undefined],
  [' , chunked', undefined],
  ['"chunked"', undefined],
  ["'chunked'", undefined],
  ['xchunked', undefined],
  ['chunkedx', undefined],
  ['chunk', undefined],
  ['chunk ed', undefined],
  ['chunked;q=1', undefined],
  ['chunked; foo', undefined],
  ['chunked=1', undefined],
  ['chunked/1.1', undefined],
  ['ch\x00unked', undefined],
  ['ch\xfcnked', undefined],
  ['identity', undefined],
  ['gzip', undefined],
  ['', undefined],
  ['chunked\r', undefined],
  ['\rchunked', undefined],
];

/** Whole header lines around Transfer-Encoding: spacing around the colon, folding, repeats. */
const TE_LINES: [string, string, Case['valid']][] = [
  ['lower-case name', 'transfer-encoding: chunked\r\n', true],
  ['upper-case name', 'TRANSFER-ENCODING: chunked\r\n', true],
  ['no space after colon', 'Transfer-Encoding:chunked\r\n', true],
  ['space before colon', 'Transfer-Encoding : chunked\r\n', undefined],
  ['tab before colon', 'Transfer-Encoding\t: chunked\r\n', undefined],
  ['leading space (folded into the line before)', 'X-A: b\r\n Transfer-Encoding: chunked\r\n', undefined],
  ['value on a folded line', 'Transfer-Encoding:\r\n chunked\r\n', undefined],
  ['value folded with a tab', 'Transfer-Encoding: \r\n\tchunked\r\n', undefined],
  ['underscore name', 'Transfer_Encoding: chunked\r\n', undefined],
  ['NUL in name', 'Transfer-Encoding\x00: chunked\r\n', undefined],
  ['repeated', 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n', undefined],
  ['chunked then identity', 'Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n', undefined],
  ['identity then chunked', 'Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n', undefined],
  ['empty then chunked', 'Transfer-Encoding: \r\nTransfer-Encoding: chunked\r\n', undefined],
  ['bare LF after it', 'Transfer-Encoding: chunked\nX-A: b\r\n', undefined],
  ['bare LF before it', 'X-A: b\nTransfer-Encoding: chunked\r\n', undefined],
  ['bare CR before it', 'X-A: b\rTransfer-Encoding: chunked\r\n', undefined],
  ['Content-Encoding instead', 'Content-Encoding: chunked\r\n', undefined],
  ['TE then Content-Length', 'Transfer-Encoding: chunked\r\nContent-Length: 5\r\n', undefined],
  ['Content-Length then TE', 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n', undefined],
  ['TE with Content-Length 0', 'Transfer-Encoding: chunked\r\nContent-Length: 0\r\n', undefined],
];

/** Content-Length variants, each followed by "hello" and the smuggle attempt. */
const CL_LINES: [string, string, Case['valid']][] = [
  ['plain', 'Content-Length: 5\r\n', true],
  ['leading zeros', 'Content-Length: 005\r\n', true],
  ['spaces around', 'Content-Length:  5  \r\n', true],
  ['repeated, same value', 'Content-Length: 5\r\nContent-Length: 5\r\n', undefined],
  ['repeated, other value', 'Content-Length: 5\r\nContent-Length: 0\r\n', undefined],
  ['list', 'Content-Length: 5, 5\r\n', undefined],
  ['plus sign', 'Content-Length: +5\r\n', undefined],
  ['minus sign', 'Content-Length: -5\r\n', undefined],
  ['hex', 'Content-Length: 0x5\r\n', undefined],
  ['decimal point', 'Content-Length: 5.0\r\n', undefined],
  ['exponent', 'Content-Length: 5e0\r\n', undefined],
  ['two numbers', 'Content-Length: 5 5\r\n', undefined],
  ['empty', 'Content-Length: \r\n', undefined],
  ['vertical tab', 'Content-Length: \v5\r\n', undefined],
  ['space before colon', 'Content-Length : 5\r\n', undefined],
  ['folded', 'Content-Length:\r\n 5\r\n', undefined],
  ['larger than sent', 'Content-Length: 99999999999999999999\r\n', undefined],
];

/** Chunked bodies: sizes, extensions, line ends, last chunk and trailers. */
const CHUNKS: [string, string, Case['valid']][] = [
  ['leading zeros', '005\r\nhello\r\n0\r\n\r\n', true],
  ['upper-case hex', 'A\r\nhellohello\r\n0\r\n\r\n', true],
  ['extension', '5;ext\r\nhello\r\n0\r\n\r\n', true],
  ['extension with value', '5;ext=val\r\nhello\r\n0\r\n\r\n', true],
  ['extension with quoted value', '5;ext="a b"\r\nhello\r\n0\r\n\r\n', true],
  ['two chunks', '2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n', true],
  ['trailer field', '5\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n', true],
  ['size 0x5', '0x5\r\nhello\r\n0\r\n\r\n', undefined],
  ['size +5', '+5\r\nhello\r\n0\r\n\r\n', undefined],
  ['size -5', '-5\r\nhello\r\n0\r\n\r\n', undefined],
  ['size with a space before', ' 5\r\nhello\r\n0\r\n\r\n', undefined],
  ['size not hex', 'g\r\nhello\r\n0\r\n\r\n', undefined],
  ['size empty', '\r\nhello\r\n0\r\n\r\n', undefined],
  ['size overflowing 64 bits', '10000000000000005\r\nhello\r\n0\r\n\r\n', undefined],
  ['size line ending in bare LF', '5\nhello\r\n0\r\n\r\n', undefined],
  ['size line ending in bare CR', '5\rhello\r\n0\r\n\r\n', undefined],
  ['data ending in bare LF', '5\r\nhello\n0\r\n\r\n', undefined],
  ['data longer than the size', '5\r\nhelloXX\r\n0\r\n\r\n', undefined],
  ['data shorter than the size', '5\r\nhell\r\n0\r\n\r\n', undefined],
  ['extension with a bare LF', '5;a=b\nc\r\nhello\r\n0\r\n\r\n', undefined],
  ['extension with a bad value', '5;a=b c\r\nhello\r\n0\r\n\r\n', undefined],
  ['last chunk ending in bare LF', '5\r\nhello\r\n0\n\n', undefined],
  ['last chunk without the empty line', '5\r\nhello\r\n0\r\nGET', undefined],
  ['last chunk 00', '5\r\nhello\r\n00\r\n\r\n', true],
  // A framing field in the trailer section must not be used (RFC 9110 6.5.1): Node refuses it.
  ['trailer Content-Length', '5\r\nhello\r\n0\r\nContent-Length: 99\r\n\r\n', 'stricter'],
  ['trailer line folded', '5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n', undefined],
];

/** Heads with bare line ends and pipelined sequences. */
const HEADS: Case[] = [
  { name: 'request line ending in bare LF', bytes: `GET /api/g HTTP/1.1\nHost: gw.test\r\n\r\n${SMUGGLE}` },
  { name: 'head of bare LFs', bytes: `GET /api/g HTTP/1.1\nHost: gw.test\n\n${SMUGGLE}` },
  { name: 'head ending in LF CRLF', bytes: `GET /api/g HTTP/1.1\r\nHost: gw.test\n\r\n${SMUGGLE}` },
  { name: 'head ending in CRLF LF', bytes: `GET /api/g HTTP/1.1\r\nHost: gw.test\r\n\n${SMUGGLE}` },
  {
    name: 'three pipelined requests',
    bytes: `GET /api/g HTTP/1.1\r\nHost: gw.test\r\n\r\n${post('Content-Length: 5\r\n', 'hello')}${SMUGGLE}`,
    valid: true,
  },
  {
    name: 'pipelined chunked then plain',
    bytes: `${post('Transfer-Encoding: chunked\r\n', CHUNKED_BODY)}GET /api/g HTTP/1.1\r\nHost: gw.test\r\n\r\n${SMUGGLE}`,
    valid: true,
  },
  {
    name: 'GET with a body announced',
    bytes: `GET /api/g HTTP/1.1\r\nHost: gw.test\r\nContent-Length: ${SMUGGLE.length}\r\n\r\n${SMUGGLE}`,
    valid: true,
  },
  // Node reads repeated SP in the request line as one; the head ends at the same CRLFCRLF under
  // both readings, so the boundaries agree and the backend gets the line normalised.
  {
    name: 'request line with two spaces',
    bytes: `GET  /api/g HTTP/1.1\r\nHost: gw.test\r\n\r\n${SMUGGLE}`,
    valid: ['GET /g ', 'GET /SMUGGLED '],
  },
  { name: 'request line with a tab', bytes: `GET\t/api/g HTTP/1.1\r\nHost: gw.test\r\n\r\n${SMUGGLE}` },
  { name: 'lower-case version', bytes: `GET /api/g http/1.1\r\nHost: gw.test\r\n\r\n${SMUGGLE}` },
];

const CASES: Case[] = [
  ...TE_VALUES.flatMap(([v, ok]): Case[] => [
    {
      name: `TE ${JSON.stringify(v)}`,
      bytes: post(`Transfer-Encoding: ${v}\r\n`, CHUNKED_BODY + SMUGGLE),
      ...(ok === undefined ? {} : { valid: ok }),
    },
    {
      name: `TE ${JSON.stringify(v)} with Content-Length`,
      bytes: post(`Transfer-Encoding: ${v}\r\nContent-Length: 4\r\n`, CHUNKED_BODY + SMUGGLE),
    },
  ]),
  ...TE_LINES.map(([n, lines, ok]): Case => ({
    name: `TE line: ${n}`,
    bytes: post(lines, CHUNKED_BODY + SMUGGLE),
    ...(ok === undefined ? {} : { valid: ok }),
  })),
  ...CL_LINES.map(([n, lines, ok]): Case => ({
    name: `Content-Length: ${n}`,
    bytes: post(lines, `hello${SMUGGLE}`),
    ...(ok === undefined ? {} : { valid: ok }),
  })),
  ...CHUNKS.map(([n, body, ok]): Case => ({
    name: `chunked body: ${n}`,
    bytes: post('Transfer-Encoding: chunked\r\n', body + SMUGGLE),
    ...(ok === undefined ? {} : { valid: ok }),
  })),
  ...HEADS,
];

/** Gateway path to backend path, as the routes below map them. */
const BACKEND_TARGET: Record<string, string> = { '/api/p': '/p', '/api/g': '/g', '/api/smuggled': '/SMUGGLED' };

let backend: RawBackend;
let gw: TestGateway;

before(async () => {
  backend = await startRawBackend((req, socket) => {
    const body = `${req.method} ${req.target} ${req.body.toString('latin1')}`;
    socket.write(
      `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body, 'latin1')}\r\n\r\n`,
    );
    socket.write(body, 'latin1');
  });
  const svc = backend.host;
  gw = await startGateway(`
routes:
  - { method: GET, route: /g, service: ${svc}, path: /g }
  - { method: POST, route: /p, service: ${svc}, path: /p }
  - { method: GET, route: /smuggled, service: ${svc}, path: /SMUGGLED }
config:
  limits: { maxBodyBytes: 65536 }
`);
});
after(() => closeAll(gw, backend));

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Writes `bytes` and reads answers until the gateway closes the connection. Once `expected`
 * answers are in (or `settleMs` passed without them), the client closes its side: Node, like
 * nginx, gives up requests still pending when the client half-closes, so that waits until then.
 */
function exchange(bytes: string, expected: number, settleMs: number): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(gw.port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      socket.end();
    };
    const settle = setTimeout(end, settleMs);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${CASE_MS} ms; got ${JSON.stringify(received.toString('latin1'))}`));
    }, CASE_MS);
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      if (parseAnswers(received, false).length >= expected) end();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(settle);
      clearTimeout(timer);
      try {
        resolve(parseAnswers(received, true));
      } catch (err) {
        reject(err as Error);
      }
    });
    socket.on('connect', () => socket.write(Buffer.from(bytes, 'latin1')));
  });
}

/** Responses with Content-Length bodies (all the gateway and this backend send here). */
function parseAnswers(buf: Buffer, complete: boolean): Answer[] {
  const out: Answer[] = [];
  let at = 0;
  while (at < buf.length) {
    const headEnd = buf.indexOf('\r\n\r\n', at);
    if (headEnd < 0 && !complete) break;
    assert.ok(headEnd >= 0, `truncated answer: ${JSON.stringify(buf.subarray(at).toString('latin1'))}`);
    const lines = buf.subarray(at, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(lines[0] ?? '')?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1))
      headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    const length = Number(headers['content-length']);
    assert.ok(Number.isInteger(length), `answer without Content-Length: ${lines.join(' | ')}`);
    if (buf.length < headEnd + 4 + length && !complete) break;
    out.push({ status, headers, body: buf.subarray(headEnd + 4, headEnd + 4 + length).toString('latin1') });
    at = headEnd + 4 + length;
  }
  return out;
}

describe(`request smuggling campaign (${CASES.length} byte streams)`, () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const strict = parseAllStrict(Buffer.from(c.bytes, 'latin1'));
      const strictReading = strict.requests.map(
        (r) => `${r.method} ${BACKEND_TARGET[r.target] ?? r.target} ${r.body.toString('latin1')}`,
      );
      const expected = Array.isArray(c.valid) ? (c.valid as readonly string[]) : strictReading;
      const from = backend.requests.length;
      // A stream the strict reading refuses gets a refusal and a close: no settling needed.
      const answers = await exchange(
        c.bytes,
        expected.length,
        strict.stop === 'end' || strict.stop === 'incomplete' || Array.isArray(c.valid) ? SETTLE_MS : CASE_MS,
      );
      // Pipelined requests run concurrently, so the backend may see them in another order.
      const forwarded = backend.requests.slice(from).map((r) => `${r.method} ${r.target} ${r.body.toString('latin1')}`);
      assert.deepEqual(
        [...forwarded].sort(),
        expected.slice(0, forwarded.length).sort(),
        `forwarded ${JSON.stringify(forwarded)}, strict reading ${JSON.stringify(expected)} (${strict.stop})`,
      );
      if (c.valid === true || Array.isArray(c.valid))
        assert.equal(forwarded.length, expected.length, `a valid stream forwarded only in part (${strict.stop})`);
      // Keeps the table honest: each mark agrees with the strict reading.
      assert.equal(
        strict.stop === 'end',
        c.valid === true || c.valid === 'stricter',
        `marked ${String(c.valid)}, strict reading ${JSON.stringify(strictReading)} (${strict.stop})`,
      );
      // The first answers are the forwarded requests', in order; then only gateway errors.
      answers.slice(0, forwarded.length).forEach((a, i) => {
        assert.equal(a.status, 200);
        assert.equal(a.body, expected[i]);
      });
      for (const a of answers.slice(forwarded.length)) {
        assert.ok(a.status >= 400, `answer ${a.status} ${a.body} for no forwarded request`);
        assert.equal((JSON.parse(a.body) as { success: boolean }).success, false);
      }
      assert.deepEqual(backend.framingErrors, []);
    });
  }
});
