/**
 * The code that makes a route's params object once the walk (./tree-match.ts) has found the route,
 * compiled when the table is built. The walk left where each value is (`starts[i]` to `ends[i]` in
 * the path, or `captured[i]` for a mixed segment's capture) and whether it may be a dot-segment
 * (`dotted[i]`: it holds a `.`, seen as the walk read the segment, or it is a capture); the maker
 * slices each value once, in a local, decodes it only when the path kept reserved escapes, refuses
 * a dot-segment (isDotSegmentValue, asked only of a value with a `.`), and returns
 * one object literal: an object of one shape per route, no intermediate array of values (a store
 * of each new string into a long-lived array costs a write barrier per value), no loop over names.
 * Routes with the same parameters share one maker (`{id}` routes all call one function, so its
 * call site stays monomorphic in a typical table).
 */
import { isDotSegmentValue } from '../upstream/target-url.js';
import { decodeReserved } from './request-path.js';

/**
 * The params of the found route, or null when a value is a dot-segment (the caller then finds
 * which, off the hot path). `rest` is a prefix route's `*` ('' for other routes).
 */
export type ParamsMaker = (
  path: string,
  starts: readonly number[],
  ends: readonly number[],
  captured: readonly string[],
  dotted: readonly number[],
  decode: boolean,
  rest: string,
) => Record<string, string> | null;

/** Where a value comes from: a whole segment of the path, or a mixed segment's regex capture. */
export type ValueSource = 'segment' | 'capture';

const makers = new Map<string, ParamsMaker>();

/**
 * The maker of `names` (in path order, each from `sources[i]`), with a `*` last for a prefix
 * route. The names are template names (letters, digits, `_`, `$`, `-`), quoted all the same.
 */
export function paramsMaker(names: readonly string[], sources: readonly ValueSource[], isPrefix: boolean): ParamsMaker {
  const key = JSON.stringify([names, sources, isPrefix]);
  let maker = makers.get(key);
  if (maker === undefined) makers.set(key, (maker = compileMaker(names, sources, isPrefix)));
  return maker;
}

function compileMaker(names: readonly string[], sources: readonly ValueSource[], isPrefix: boolean): ParamsMaker {
  const lines: string[] = [];
  const fields: string[] = [];
  names.forEach((name, i) => {
    if (sources[i] === 'capture') lines.push(`const v${i} = c[${i}];`);
    else lines.push(`let v${i} = p.slice(s[${i}], e[${i}]);`, `if (d) v${i} = decode(v${i});`);
    lines.push(`if (x[${i}] !== 0 && isDot(v${i})) return null;`);
    fields.push(`${JSON.stringify(name)}: v${i}`);
  });
  if (isPrefix) fields.push(`"*": r`);
  const body = `'use strict';\nreturn function makeParams(p, s, e, c, x, d, r) {\n${lines.join('\n')}\nreturn { ${fields.join(', ')} };\n};`;
  return new Function('decode', 'isDot', body)(decodeReserved, isDotSegmentValue) as ParamsMaker;
}
