/**
 * Methods as bits. The router keeps, on every place a path can end, the set of methods routes take
 * there as one number, so a request no route of its method takes learns the methods of its `Allow`
 * from the walk it made anyway, and the 405 answer for a set is made once.
 */
import { HTTP_METHODS } from '../config/schema.js';
import type { Match } from './types.js';

/** The index of each method the configuration accepts (HTTP_METHODS order, the `Allow` order). */
const INDEX = new Map<string, number>(HTTP_METHODS.map((m, i) => [m, i]));

const GET = HTTP_METHODS.indexOf('GET');

/** How many methods a route can have, so how many bits a set has. */
export const METHOD_COUNT = HTTP_METHODS.length;

/** The index of `method`, or -1 for a method no route can have (its bit is then 0). */
export function methodIndex(method: string): number {
  // Most requests are GETs: one comparison instead of hashing the method.
  return method === 'GET' ? GET : (INDEX.get(method) ?? -1);
}

/** The bit of a method index; 0 for -1. */
export function methodBit(index: number): number {
  return index < 0 ? 0 : 1 << index;
}

const NOT_FOUND: Match = Object.freeze({ kind: 'not-found' });

/** The 405 answers made so far, by set: a configuration has few distinct sets. */
const notAllowed = new Map<number, Match>();

/** 404 for an empty set, else 405 with the set as `Allow`: one shared, frozen object per set. */
export function missFor(methods: number): Match {
  if (methods === 0) return NOT_FOUND;
  let m = notAllowed.get(methods);
  if (m === undefined) {
    const allow = HTTP_METHODS.filter((_, i) => (methods & (1 << i)) !== 0).join(', ');
    notAllowed.set(methods, (m = Object.freeze({ kind: 'method-not-allowed', allow })));
  }
  return m;
}
