/**
 * The live feed (`GET /api/feed`, Server-Sent Events): on connect a `status` event and a `series`
 * event with the last five minutes, then every second a `status` event and a `point` event with
 * the second that just ended. One timer for every client, running only while one is connected;
 * each document is built and serialised once per tick, whoever listens. A client that does not
 * read what it is sent is cut once 1 MiB waits for it, so a stalled page never holds memory.
 */
import type { ServerResponse } from 'node:http';

/** Buffered bytes past which a client that does not read is disconnected. */
const MAX_BUFFERED = 1024 * 1024;

export interface FeedSource {
  status(): unknown;
  series(): unknown;
  point(): unknown;
}

export interface Feed {
  /** Streams to `res` until it closes. */
  add(res: ServerResponse): void;
  /** Ends every stream (the gateway closes). */
  closeAll(): void;
  readonly size: number;
}

export function createFeed(source: FeedSource, intervalMs = 1000): Feed {
  const clients = new Set<ServerResponse>();
  let timer: NodeJS.Timeout | undefined;
  const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const send = (res: ServerResponse, text: string) => {
    if (res.writableLength > MAX_BUFFERED) res.destroy();
    else res.write(text);
  };
  const tick = () => {
    const text = event('status', source.status()) + event('point', source.point());
    for (const res of clients) send(res, text);
  };
  return {
    add(res) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        // Proxies in front of the admin port must pass each event on at once.
        'x-accel-buffering': 'no',
      });
      // The status first: it fills most of the page; the charts' five minutes follow.
      res.write(`retry: 2000\n\n${event('status', source.status())}`);
      res.write(event('series', source.series()));
      clients.add(res);
      res.once('close', () => {
        clients.delete(res);
        if (clients.size === 0) {
          clearInterval(timer);
          timer = undefined;
        }
      });
      if (timer === undefined) {
        timer = setInterval(tick, intervalMs);
        timer.unref();
      }
    },
    closeAll() {
      for (const res of clients) res.end();
      clients.clear();
      clearInterval(timer);
      timer = undefined;
    },
    get size() {
      return clients.size;
    },
  };
}
