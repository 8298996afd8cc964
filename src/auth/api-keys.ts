/**
 * Key authentication of a configuration (`config.auth.apiKey`, docs/consumers.md): where keys are
 * read, and the key store of its consumers, made once per configuration; a changed consumers file
 * refills that store (setup/consumers-file.ts).
 */
import type { CompiledConfig } from '../config/types.js';
import { compileApiKeySource, type ApiKeySource } from './api-key-source.js';
import { createKeyStore, type KeyStore } from './key-store.js';

export interface ApiKeys {
  readonly source: ApiKeySource;
  readonly store: KeyStore;
}

/** The key authentication of `config`; undefined when `auth.apiKey` is not set. */
export function compileApiKeys(config: CompiledConfig): ApiKeys | undefined {
  const source = compileApiKeySource(config.settings.auth.apiKey);
  if (source === undefined) return undefined;
  return { source, store: createKeyStore(config.consumers, config.settings.tls?.clientSubjectHeader) };
}

/** The client headers no backend gets: `auth.stripHeaders`, and the key's header. */
export function withKeyHeader(stripHeaders: readonly string[], apiKeys: ApiKeys | undefined): readonly string[] {
  const header = apiKeys?.source.header;
  return header === undefined ? stripHeaders : [...stripHeaders, header];
}
