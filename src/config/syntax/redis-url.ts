/**
 * `config.redis.url`: `redis://[user][:password@]host[:port][/db]`, or `rediss://` for TLS.
 * Checked at config load (so `portico check` reports it with its line), and shown in logs and
 * errors without its password.
 */

/** Why `text` is not a usable Redis URL, or undefined when it is one. */
export function redisUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${redactRedisUrl(text)}" is not a URL (expected redis://host:6379 or rediss://host:6380)`;
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    return `scheme ${url.protocol.slice(0, -1)}: is not redis: or rediss:`;
  if (url.hostname === '') return 'the URL names no host';
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) return `"/${db}" is not a database number`;
  if (url.search !== '' || url.hash !== '')
    return 'query and fragment are not read: put the settings under config.redis';
  return undefined;
}

/**
 * The URL with its password replaced by `***`, for logs and error messages, read as the URL
 * parser reads it (a password may hold `@`, `:` or `/`). A text that does not parse loses
 * everything between `//` and its last `@`.
 */
export function redactRedisUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    const start = text.indexOf('//');
    const at = text.lastIndexOf('@');
    return start >= 0 && at > start ? `${text.slice(0, start + 2)}***${text.slice(at)}` : text;
  }
  if (url.password === '') return text;
  return `${url.protocol}//${url.username}:***@${url.host}${url.pathname === '/' && !text.endsWith('/') ? '' : url.pathname}`;
}
