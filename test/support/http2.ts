/** A node:http2 client request for tests, read whole. */
import type { ClientHttp2Session, IncomingHttpHeaders } from 'node:http2';

export interface H2Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One request on `session`; `body` is sent as it is (no content-length unless in `headers`). */
export function h2request(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ...headers }, { endStream: body === undefined });
    let answer: IncomingHttpHeaders = {};
    let text = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => (answer = h));
    stream.on('data', (c: string) => (text += c));
    stream.on('end', () => resolve({ status: Number(answer[':status']), headers: answer, body: text }));
    stream.on('error', reject);
    if (body !== undefined) stream.end(body);
  });
}
