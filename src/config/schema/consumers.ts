/**
 * Consumers (docs/consumers.md): who may call with an API key. Declared under the top-level
 * `consumers:` or in the file `config.consumersFile` names, which holds the same `consumers:` list.
 */
import { z } from 'zod';

/** A stored key: the SHA-256 of the key, in hex, after `sha256:` (`portico key` prints one). */
export const KEY_HASH = /^sha256:[0-9a-fA-F]{64}$/;

export const ConsumerSchema = z.strictObject({
  id: z.string().min(1).max(256).describe('The consumer: unique, named in logs of its refusals and in quotas'),
  keys: z
    .array(
      z
        .string()
        .regex(KEY_HASH, 'expected "sha256:" and the 64 hex digits of the key\'s SHA-256 (portico key prints one)'),
    )
    .default([])
    .describe('The SHA-256 hashes of its API keys, as sha256:<hex>; several while a key is rotated'),
  claims: z
    .record(z.string(), z.unknown())
    .default({})
    .describe(
      "Claims of a request made with one of its keys, as a token's: for require: rules, X-<claim> headers and {claims.NAME}",
    ),
  plan: z.string().min(1).optional().describe('The plan the consumer is on, for quotas by plan'),
});

export const ConsumersSchema = z.array(ConsumerSchema);

/** The file `config.consumersFile` names: only the `consumers:` list. */
export const ConsumersFileSchema = z
  .strictObject({ consumers: ConsumersSchema.describe('The consumers and their key hashes') })
  .describe('Portico consumers file');

export type ConsumerConfig = z.output<typeof ConsumerSchema>;
