/**
 * A raw HTTP/1.1 client on a plain TCP socket, for requests no HTTP library sends as written
 * (an `Upgrade: h2c` on a POST, pipelined requests): write bytes, read whole responses.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** Header names lower-cased; repeated headers joined with ", ". */
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface RawConnection {
  readonly socket: Socket;
  write(data: string | Buffer): void;
  /** The next complete response on the connection (Content-Length, chunked or close-delimited). */
  next(ms?: number): Promise<RawResponse>;
  /** Resolves when the server closed the connection. */
  readonly closed: Promise<void>;
  close(): void;
}

/** Opens a TCP connection to 127.0.0.1:`port`. */
export function rawConnect(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = Buffer.alloc(0);
    let ended = false;
    const waiters: (() => void)[] = [];
    const wake = () => {
      for (const w of waiters.splice(0)) w();
    };
    socket.on('data', (d: Buffer) => {
      buffer = Buffer.concat([buffer, d]);
      wake();
    });
    const closed = new Promise<void>((r) =>
      socket.once('close', () => {
        ended = true;
        wake();
        r();
      }),
    );
    socket.on('error', () => {});
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      resolve({
        socket,
        closed,
        write: (data) => void socket.write(data),
        close: () => socket.destroy(),
        next(ms = 5_000) {
          return new Promise((ok, fail) => {
            const timer = setTimeout(
              () =>
                fail(
                  new Error(`no complete response within ${ms} ms; got ${JSON.stringify(buffer.toString('latin1'))}`),
                ),
              ms,
            );
            const attempt = () => {
              const parsed = parseResponse(buffer, ended);
              if (parsed !== undefined) {
                clearTimeout(timer);
                buffer = buffer.subarray(parsed.used);
                ok(parsed.response);
              } else if (ended) {
                clearTimeout(timer);
                fail(new Error(`connection closed; got ${JSON.stringify(buffer.toString('latin1'))}`));
              } else waiters.push(attempt);
            };
            attempt();
          });
        },
      });
    });
    socket.once('error', reject);
  });
}

function parseResponse(buffer: Buffer, ended: boolean): { response: RawResponse; used: number } | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const lines = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let at = headEnd + 4;
  // These statuses never have a body, whatever Content-Length says (a 304 may carry the 200's).
  if (status === 204 || status === 304 || (status >= 100 && status < 200))
    return { response: { status, headers, body: '' }, used: at };
  if (headers['content-length'] !== undefined) {
    const end = at + Number(headers['content-length']);
    if (buffer.length < end) return undefined;
    return { response: { status, headers, body: buffer.subarray(at, end).toString('utf8') }, used: end };
  }
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) {
        const end = buffer.indexOf('\r\n\r\n', lineEnd - 2);
        if (end < 0) return undefined;
        return { response: { status, headers, body: Buffer.concat(parts).toString('utf8') }, used: end + 4 };
      }
      if (buffer.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  if (!ended) return undefined;
  return { response: { status, headers, body: buffer.subarray(at).toString('utf8') }, used: buffer.length };
}

/**
 * Opens a connection to 127.0.0.1:`port`, runs `use` on it and closes it, even when `use` throws.
 * @example await withRawConnection(gw.port, async (conn) => { conn.write(head); assert.equal((await conn.next()).status, 400); });
 */
export async function withRawConnection<T>(port: number, use: (conn: RawConnection) => Promise<T>): Promise<T> {
  const conn = await rawConnect(port);
  try {
    return await use(conn);
  } finally {
    conn.close();
  }
}
