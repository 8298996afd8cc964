/**
 * Upgrades the gateway does not perform are served as ordinary HTTP/1.1 requests: RFC 9110 7.8
 * lets a server ignore `Upgrade`, and nginx and Envoy do so with `Upgrade: h2c`, which Java's
 * HttpClient and `curl --http2` send by default on plain-text connections.
 *
 * Node hands every request with `Connection: upgrade` to the server's 'upgrade' listener, its
 * HTTP parser already detached and its body unread (the bytes after the head arrive as `head`,
 * the rest stays in the socket). Node 20 cannot decline an upgrade (the `shouldUpgradeCallback`
 * server option only exists in later versions), so the request is handed back to the server:
 * its head is written again without the upgrade, put back in front of the unread bytes, and the
 * socket re-enters the server as a new connection. Node's own parser then reads that head, the
 * body (Content-Length or chunked), and any later keep-alive or pipelined requests, under every
 * server limit and through the normal request handler. Works the same on Node 20, 22 and 24.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';

/**
 * The request head of `req` without the upgrade: every `Upgrade` header removed and the `upgrade`
 * token removed from `Connection` (the other tokens stay, e.g. `HTTP2-Settings`, so the headers
 * they name are still dropped on the way to the backend). Names, values and order are kept.
 * Node decodes heads as latin1 and refuses CR/LF in them, so the text is safe to parse again.
 */
export function headWithoutUpgrade(
  req: Pick<IncomingMessage, 'method' | 'url' | 'httpVersion' | 'rawHeaders'>,
): string {
  let head = `${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}\r\n`;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === 'upgrade') continue;
    let value = raw[i + 1]!;
    if (lower === 'connection' && /(^|,)\s*upgrade\s*(,|$)/i.test(value)) {
      value = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token !== '' && token.toLowerCase() !== 'upgrade')
        .join(', ');
      if (value === '') continue;
    }
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}

/** Serves an upgrade request the gateway will not upgrade as a plain request of `server`. */
export function serveWithoutUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  if (socket.destroyed) return;
  if (head.length > 0) socket.unshift(head);
  socket.unshift(Buffer.from(headWithoutUpgrade(req), 'latin1'));
  // A TLS server takes decrypted connections on 'secureConnection' ('connection' would start a
  // second handshake inside the first).
  server.emit(socket instanceof TLSSocket ? 'secureConnection' : 'connection', socket);
}
