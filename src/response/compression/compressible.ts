/**
 * Which media types are worth compressing (`compression.types`), as one test made at config load:
 * exact types, whole top-level types (`text/*`), structured suffixes (`application/*+json`).
 * `text/event-stream` never is: an event must reach the client when it is sent, not when the
 * compressor's window fills.
 */

/** True when an answer with this `Content-Type` may be compressed. */
export type IsCompressible = (contentType: string | undefined) => boolean;

export function compileCompressibleTypes(types: readonly string[]): IsCompressible {
  const exact = new Set<string>();
  const topLevel = new Set<string>();
  const suffixes: { top: string; suffix: string }[] = [];
  for (const range of types) {
    const [top, sub] = range.split('/') as [string, string];
    if (sub === '*') topLevel.add(top);
    else if (sub.startsWith('*')) suffixes.push({ top, suffix: sub.slice(1) });
    else exact.add(range);
  }
  return (contentType) => {
    if (contentType === undefined) return false;
    const semi = contentType.indexOf(';');
    const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
    if (type === 'text/event-stream') return false;
    if (exact.has(type)) return true;
    const slash = type.indexOf('/');
    if (slash <= 0) return false;
    const top = type.slice(0, slash);
    if (topLevel.has(top)) return true;
    for (const s of suffixes) if (s.top === top && type.endsWith(s.suffix)) return true;
    return false;
  };
}
