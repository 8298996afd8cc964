/**
 * Preloaded into a gateway process by tests (`NODE_OPTIONS=--import .../fake-dns.mjs`): host names
 * ending in `.invalid` (RFC 6761: never resolvable) fail with ENOTFOUND at once, without a query
 * leaving the machine; every other name goes to the real resolver.
 */
import dns from 'node:dns';
import process from 'node:process';

const realLookup = dns.lookup;
const realPromisesLookup = dns.promises.lookup;
const notFound = (hostname) =>
  Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
    code: 'ENOTFOUND',
    errno: -3008,
    syscall: 'getaddrinfo',
    hostname,
  });
const isFake = (hostname) => typeof hostname === 'string' && hostname.toLowerCase().endsWith('.invalid');

dns.lookup = function lookup(hostname, options, callback) {
  if (!isFake(hostname)) return realLookup.call(this, hostname, options, callback);
  const cb = typeof options === 'function' ? options : callback;
  process.nextTick(() => cb(notFound(hostname)));
  return {};
};
dns.promises.lookup = function lookup(hostname, options) {
  return isFake(hostname) ? Promise.reject(notFound(hostname)) : realPromisesLookup.call(this, hostname, options);
};
