/**
 * Rules on consumers and API keys that the schema cannot express (docs/consumers.md): ids are
 * unique, a key hash names one consumer, consumers come from one place (`consumers:` or
 * `config.consumersFile`), and `config.auth.apiKey` names where the key is read.
 */
import type { AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';
import { HEADER_NAME } from './syntax/headers.js';

/** Checks a `consumers:` list (of the configuration or of a consumers file): ids and key hashes unique. */
export function consumerListRules(list: unknown, at: AddProblem): void {
  if (!Array.isArray(list)) return;
  const ids = new Map<string, number>();
  const hashes = new Map<string, string>();
  list.forEach((consumer: unknown, index: number) => {
    if (!isRecord(consumer)) return;
    const { id, keys } = consumer;
    if (typeof id === 'string') {
      const first = ids.get(id);
      if (first !== undefined)
        at(['consumers', index, 'id'], `consumers[${index}].id: "${id}" is already the id of consumers[${first}]`);
      else ids.set(id, index);
    }
    if (!Array.isArray(keys)) return;
    keys.forEach((key: unknown, k: number) => {
      if (typeof key !== 'string') return;
      // Hex is case-insensitive: two spellings of one digest are one key.
      const hash = key.toLowerCase();
      const owner = hashes.get(hash);
      if (owner !== undefined)
        at(
          ['consumers', index, 'keys', k],
          `consumers[${index}].keys[${k}]: this key hash is already ${owner}; a key must name one consumer`,
        );
      else hashes.set(hash, `consumers[${index}].keys[${k}]`);
    });
  });
}

/**
 * Checks how consumers and `config.auth.apiKey` fit together: one source of consumers, a header or
 * a parameter to read the key from, and no consumers that no request could name (a warning).
 */
export function consumerRules(raw: Record<string, unknown>, at: AddProblem, warn: AddProblem): void {
  const config = isRecord(raw.config) ? raw.config : {};
  const auth = isRecord(config.auth) ? config.auth : {};
  if (raw.consumers !== undefined && config.consumersFile !== undefined)
    at(
      ['config', 'consumersFile'],
      'config.consumersFile: consumers are declared both here and under consumers:; keep one of the two',
    );
  consumerListRules(raw.consumers, at);
  const hasConsumers = raw.consumers !== undefined || config.consumersFile !== undefined;
  const apiKey = auth.apiKey;
  if (!isRecord(apiKey)) {
    if (hasConsumers && apiKey === undefined)
      warn(
        raw.consumers !== undefined ? ['consumers'] : ['config', 'consumersFile'],
        'consumers are declared but config.auth.apiKey is not set: no request can present their keys',
        'add config.auth.apiKey: { header: X-API-Key }',
      );
    return;
  }
  if (apiKey.header === undefined && apiKey.query === undefined)
    at(['config', 'auth', 'apiKey'], 'config.auth.apiKey: name a header, a query parameter, or both');
  const header = apiKey.header;
  if (typeof header === 'string' && header !== '') {
    if (!HEADER_NAME.test(header))
      at(['config', 'auth', 'apiKey', 'header'], `config.auth.apiKey.header: "${header}" is not a header name`);
    else if (header.toLowerCase() === 'authorization' || header.toLowerCase() === 'cookie')
      at(
        ['config', 'auth', 'apiKey', 'header'],
        `config.auth.apiKey.header: ${header} carries other credentials; give the key a header of its own`,
        'X-API-Key is the usual name',
      );
  }
  const query = apiKey.query;
  // The name is quoted in the 401's challenge: unreserved characters need no escaping there or in a URL.
  if (typeof query === 'string' && query !== '' && !/^[A-Za-z0-9._~-]+$/.test(query))
    at(
      ['config', 'auth', 'apiKey', 'query'],
      `config.auth.apiKey.query: "${query}" may hold only letters, digits, ".", "_", "~" and "-"`,
    );
  if (!hasConsumers)
    warn(
      ['config', 'auth', 'apiKey'],
      'config.auth.apiKey is set but no consumers are declared: every API key is refused',
      'declare them under consumers: or in config.consumersFile',
    );
}
