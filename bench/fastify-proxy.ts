/**
 * The @fastify/http-proxy 11 candidate: Fastify 5 with the proxy plugin mounted on
 * `/api` (prefix removed, like Portico's basePath), undici upstream pool sized like Portico's
 * (64 connections), logging off as in its documented defaults.
 * Run: `node fastify-proxy.js BACKEND_URL [port]`; prints `{"ready":true,"port":N}`.
 */
import Fastify from 'fastify';
import proxy from '@fastify/http-proxy';

const app = Fastify({ logger: false, keepAliveTimeout: 72_000 });
await app.register(proxy, {
  upstream: process.argv[2] ?? 'http://127.0.0.1:3000',
  prefix: '/api',
  rewritePrefix: '',
  http2: false,
  undici: { connections: 64, pipelining: 1 },
});
await app.listen({ port: Number(process.argv[3] ?? 0), host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(
  JSON.stringify({ ready: true, port: typeof address === 'object' && address !== null ? address.port : 0 }) + '\n',
);
process.on('SIGTERM', () => process.exit(0));
