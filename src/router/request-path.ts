/**
 * The request path as the router compares it with route patterns. A path of plain characters is
 * compared as it is, which is the case the hot path checks for; anything else is read here once
 * per request, off that path: percent-escapes are decoded except those of the reserved
 * characters (`%2F` stays three characters, so an encoded slash never splits a segment), a `#`
 * ends the path, the absolute form (`http://host/path`) routes on its path, and a malformed escape
 * matches no route.
 */

/** A path to match: `path` to compare (decoded), `raw` to cut a prefix route's rest from. */
export interface RequestPath {
  readonly path: string;
  readonly raw: string;
  /** Whether the path kept reserved escapes that a parameter's value must still decode. */
  readonly decodeParams: boolean;
}

const SLASH = 47;

/** True when `raw` needs `readRequestPath` before it can be compared: the common path does not. */
export function needsReading(raw: string): boolean {
  return raw.charCodeAt(0) !== SLASH || raw.indexOf('%') >= 0 || raw.indexOf('#') >= 0;
}

/**
 * The path as compared, or undefined when no route can match it (a malformed escape, a target
 * that is neither a path nor an absolute http(s) URL).
 * @example readRequestPath('/a%20b/c%2Fd') -> { path: '/a b/c%2Fd', raw: '/a%20b/c%2Fd', decodeParams: true }
 */
export function readRequestPath(target: string): RequestPath | undefined {
  let raw = target.charCodeAt(0) === SLASH ? target : pathOfAbsolute(target);
  if (raw === undefined) return undefined;
  const hash = raw.indexOf('#');
  if (hash >= 0) raw = raw.slice(0, hash);
  if (raw.indexOf('%') < 0) return { path: raw, raw, decodeParams: false };
  let decodeParams = false;
  let protectedText = '';
  let from = 0;
  for (let i = raw.indexOf('%'); i >= 0; i = raw.indexOf('%', i + 1)) {
    const reserved = RESERVED_ESCAPES.has(raw.slice(i + 1, i + 3).toUpperCase());
    if (!reserved) continue;
    decodeParams = true;
    // decodeURI keeps the other reserved escapes but decodes `%25`: it must stay `%25` here.
    if (raw.charCodeAt(i + 1) === 50 && raw.charCodeAt(i + 2) === 53) {
      protectedText += raw.slice(from, i) + '%2525';
      from = i + 3;
    }
  }
  try {
    return { path: decodeURI(protectedText + raw.slice(from)), raw, decodeParams };
  } catch {
    return undefined;
  }
}

/** The escapes that decodeURI leaves as they are (and `%25`): a parameter's value decodes them. */
const RESERVED_ESCAPES = new Set(['23', '24', '25', '26', '2B', '2C', '2F', '3A', '3B', '3D', '3F', '40']);

/** A parameter's value taken from a decoded path: its remaining reserved escapes decoded. */
export function decodeReserved(value: string): string {
  if (value.indexOf('%') < 0) return value;
  return value.replace(/%(2[3456BbCcFf]|3[AaBbDdFf]|40)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** `http://host/a?b` -> `/a`; undefined for anything but an absolute http(s) URL with a host. */
function pathOfAbsolute(target: string): string | undefined {
  const scheme = target.slice(0, target.indexOf('://')).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return undefined;
  const authorityStart = scheme.length + 3;
  if (target.indexOf('#', authorityStart) >= 0) return undefined;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.host === '') return undefined;
  const slash = target.indexOf('/', authorityStart);
  return slash < 0 ? '/' : target.slice(slash);
}
