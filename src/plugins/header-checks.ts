/**
 * What a plugin may write into a header (docs/plugins.md#the-trust-boundary): a name HTTP allows
 * that is neither the framing's nor one the gateway strips, and a value that cannot split a
 * header or a message. Checked on every edit of the backend call's headers and the response head.
 */
import { foldHeaderName } from '../upstream/trust-boundary.js';

/** A header name as HTTP allows it (RFC 9110 5.1). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A value without CR, LF or NUL: a plugin cannot split a header or a response. */
const VALUE = /^[^\r\n\0]*$/;

/** Names the framing of a message depends on: the gateway's to set, on either side. */
export const MESSAGE_FRAMING: ReadonlySet<string> = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'upgrade',
  'trailer',
  'te',
]);

/** What a plugin may not set on the request to the backend: the framing, and the backend's Host. */
const FRAMING: ReadonlySet<string> = new Set([...MESSAGE_FRAMING, 'host']);

/** The name in lower case, or a TypeError (the plugin's failure) for one it may not set; `refused` takes the folded name. */
export function checkedName(name: unknown, refused: (folded: string) => boolean, side: string): string {
  if (typeof name !== 'string' || !TOKEN.test(name)) throw new TypeError(`not a header name: ${String(name)}`);
  const lower = name.toLowerCase();
  if (FRAMING.has(lower) || refused(foldHeaderName(lower)))
    throw new TypeError(
      `a plugin may not set or remove the ${side} header "${name}": the gateway sets it or strips it (docs/plugins.md#the-trust-boundary)`,
    );
  return lower;
}

/** The value, or a TypeError for one that is not text or could split the message. */
export function checkedValue(value: unknown): string {
  if (typeof value !== 'string' || !VALUE.test(value))
    throw new TypeError('a header value must be text without CR, LF or NUL');
  return value;
}
