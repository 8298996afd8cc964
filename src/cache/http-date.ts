/**
 * HTTP-date (RFC 9110 5.6.7): the preferred IMF-fixdate and the two obsolete forms a recipient
 * must still read, and nothing else. `Date.parse` reads far more (`UTC` or `AEST` zones, no comma,
 * dashes, a one-digit hour), and an `Expires` it should have found invalid would make an answer
 * fresh that RFC 9111 5.3 calls expired. Names are read case-insensitively, as the caches the
 * public cache test suite measures do.
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:mon|tue|wed|thu|fri|sat|sun)';
const DAY_LONG = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const MONTH = '(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

/** Sun, 06 Nov 1994 08:49:37 GMT */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`, 'i');
/** Sunday, 06-Nov-94 08:49:37 GMT */
const RFC850 = new RegExp(`^${DAY_LONG}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`, 'i');
/** Sun Nov  6 08:49:37 1994 */
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`, 'i');

/** Milliseconds since the epoch; undefined when `value` is not an HTTP-date. */
export function parseHttpDate(value: string | string[] | undefined, now = Date.now()): number | undefined {
  if (value === undefined || Array.isArray(value)) return undefined;
  const text = value.trim();
  let m = IMF_FIXDATE.exec(text);
  if (m !== null) return utc(Number(m[3]), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = RFC850.exec(text);
  if (m !== null) return utc(fullYear(Number(m[3]), now), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = ASCTIME.exec(text);
  if (m !== null) return utc(Number(m[6]), m[1]!, m[2]!.trim(), m[3]!, m[4]!, m[5]!);
  return undefined;
}

/** RFC 9110 5.6.7: a two-digit year more than 50 years ahead is the latest such year in the past. */
function fullYear(twoDigits: number, now: number): number {
  const current = new Date(now).getUTCFullYear();
  let year = current - (current % 100) + twoDigits;
  if (year > current + 50) year -= 100;
  return year;
}

function utc(year: number, month: string, day: string, h: string, min: string, s: string): number | undefined {
  const hours = Number(h);
  const minutes = Number(min);
  const seconds = Number(s);
  const d = Number(day);
  if (hours > 23 || minutes > 59 || seconds > 60 || d < 1 || d > 31) return undefined;
  const t = Date.UTC(year, MONTHS.indexOf(month.toLowerCase()), d, hours, minutes, Math.min(seconds, 59));
  return Number.isFinite(t) ? t : undefined;
}
