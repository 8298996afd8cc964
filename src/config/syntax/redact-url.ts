/**
 * A URL as logs and messages show it. Its credentials and its query may hold a secret (a value
 * from the environment, an API key, a client's token), so both become `***`, read as the URL
 * parser reads them (a password may hold `@`, `:` or `/`); the fragment is dropped. Scheme, host,
 * port and path stay: they say which endpoint is meant.
 */

/** `https://user:pw@idp.example/keys?key=k#x` as `https://***@idp.example/keys?***`. */
export function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return redactUnparsed(text);
  }
  const credentials = url.username !== '' || url.password !== '' ? '***@' : '';
  const query = url.search !== '' ? '?***' : '';
  // An opaque URL (`collector:4318`) has no host part: its text after the scheme is all path.
  const authority =
    url.host !== '' || text.slice(url.protocol.length).startsWith('//') ? `//${credentials}${url.host}` : '';
  return `${url.protocol}${authority}${url.pathname}${query}`;
}

/** A text that is no URL loses everything between `//` and its last `@`, and from `?` or `#` on. */
function redactUnparsed(text: string): string {
  const end = text.search(/[?#]/);
  let out = end < 0 ? text : `${text.slice(0, end)}${text[end] === '?' ? '?***' : ''}`;
  const start = out.indexOf('//');
  const at = out.lastIndexOf('@');
  if (start >= 0 && at > start) out = `${out.slice(0, start + 2)}***${out.slice(at)}`;
  return out;
}
