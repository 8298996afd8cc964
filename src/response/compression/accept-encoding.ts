/**
 * Content negotiation on `Accept-Encoding` (RFC 9110 12.5.3): which of the gateway's codings a
 * client gets. The client's q-values decide; among codings it weighs the same, the gateway's order
 * (`compression.algorithms`) does. A coding is acceptable when listed with q > 0, or when `*` is
 * (q > 0) and it is not listed; `q=0` refuses it. No header, or one that accepts none of the
 * gateway's codings, gets the answer as it is: refusing `identity` (`identity;q=0`, `*;q=0`) is
 * not answered with 406, since a gateway in front of many backends cannot promise a coding for
 * every answer (nginx and Envoy do the same).
 */
import type { CompressionAlgorithm } from '../../config/schema.js';

/** Chooses a coding for one request's `Accept-Encoding`; undefined: send the answer as it is. */
export type ChooseEncoding = (acceptEncoding: string | undefined) => CompressionAlgorithm | undefined;

/** Distinct header values remembered: browsers and HTTP libraries send a handful. */
const MEMO_SIZE = 64;
/** Longer headers are parsed each time rather than remembered (and do not evict the common ones). */
const MEMO_MAX_LENGTH = 256;

/**
 * The negotiation for `offered` codings (the gateway's preference order), made once per
 * configuration. Results are remembered per header value, so the usual request parses nothing.
 */
export function createEncodingChooser(offered: readonly CompressionAlgorithm[]): ChooseEncoding {
  const memo = new Map<string, CompressionAlgorithm | null>();
  return (header) => {
    if (header === undefined || header === '') return undefined;
    const known = memo.get(header);
    if (known !== undefined) return known ?? undefined;
    const chosen = chooseEncoding(header, offered) ?? null;
    if (header.length <= MEMO_MAX_LENGTH) {
      if (memo.size >= MEMO_SIZE) memo.clear();
      memo.set(header, chosen);
    }
    return chosen ?? undefined;
  };
}

/** The negotiation itself, without the memo. */
export function chooseEncoding(
  header: string,
  offered: readonly CompressionAlgorithm[],
): CompressionAlgorithm | undefined {
  const weights = parseAcceptEncoding(header);
  const star = weights.get('*');
  let best: CompressionAlgorithm | undefined;
  let bestQ = 0;
  for (const coding of offered) {
    const q = weights.get(coding) ?? star ?? 0;
    // Strictly greater: on a tie the gateway's earlier (preferred) coding stays.
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  return best;
}

/**
 * The codings of an `Accept-Encoding` value with their weights (lower case; `x-gzip` is gzip,
 * RFC 9110 8.4.1.3). A malformed weight makes its entry count as q=0: nothing is guessed.
 */
export function parseAcceptEncoding(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const semi = part.indexOf(';');
    let coding = (semi < 0 ? part : part.slice(0, semi)).trim().toLowerCase();
    if (coding === '') continue;
    if (coding === 'x-gzip') coding = 'gzip';
    const q = semi < 0 ? 1 : weightOf(part.slice(semi + 1));
    // Listed twice: the higher weight is the client's intent at best; take the lower, to be safe.
    const before = weights.get(coding);
    weights.set(coding, before === undefined ? q : Math.min(before, q));
  }
  return weights;
}

/** RFC 9110 12.4.2: `q=` followed by 0, 0.xxx, 1 or 1.000; anything else is 0. */
function weightOf(params: string): number {
  for (const param of params.split(';')) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
    const value = param.slice(eq + 1).trim();
    return /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : 0;
  }
  return 1;
}
