/**
 * Talking to the admin listener (docs/dashboard.md) the way a browser or curl does: node:http, so
 * that a test can send any Host header and read Set-Cookie as it was written; and its live feed
 * (`/api/feed`) parsed into named Server-Sent Events as they arrive.
 */
import { request, type IncomingHttpHeaders, type ClientRequest } from 'node:http';

export interface AdminReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  json(): unknown;
}

/** One request to the admin listener on 127.0.0.1:`port`, read in full. */
export function adminRequest(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<AdminReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as unknown });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface FeedEvent {
  readonly event: string;
  readonly data: unknown;
}

export interface Feed {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly events: FeedEvent[];
  /** Resolves with the first event (from the start of the stream) that passes `test`; rejects after `ms`. */
  next(test: (e: FeedEvent) => boolean, ms?: number): Promise<FeedEvent>;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens `/api/feed` and parses its events as they arrive. */
export function openFeed(port: number, headers: Record<string, string> = {}): Promise<Feed> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined = undefined;
    req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/feed',
        headers: { accept: 'text/event-stream', ...headers },
        agent: false,
      },
      (res) => {
        const events: FeedEvent[] = [];
        const waiters = new Set<() => void>();
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let event = 'message';
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('data: ')) data += line.slice(6);
            }
            if (data !== '') events.push({ event, data: JSON.parse(data) as unknown });
          }
          for (const w of [...waiters]) w();
        });
        res.on('error', () => {});
        const ended = new Promise<void>((r) => res.on('close', r));
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          events,
          ended,
          close: () => req?.destroy(),
          next(test, ms = 5_000) {
            return new Promise((found, fail) => {
              const look = () => {
                const hit = events.find(test);
                if (hit === undefined) return;
                waiters.delete(look);
                clearTimeout(timer);
                found(hit);
              };
              const timer = setTimeout(() => {
                waiters.delete(look);
                fail(new Error(`no matching feed event within ${ms} ms (${events.length} events seen)`));
              }, ms);
              waiters.add(look);
              look();
            });
          },
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
