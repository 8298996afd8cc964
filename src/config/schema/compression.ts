/** The `config.compression` section: response compression (docs/compression.md). */
import { z } from 'zod';

/** The content codings the gateway can produce; zstd only where the Node version has it. */
export const COMPRESSION_ALGORITHMS = ['zstd', 'br', 'gzip'] as const;
export type CompressionAlgorithm = (typeof COMPRESSION_ALGORITHMS)[number];

/** Media types compressed unless `types` says otherwise: text that compresses well. */
export const DEFAULT_COMPRESSIBLE_TYPES = [
  'application/json',
  'application/*+json',
  'application/x-ndjson',
  'application/javascript',
  'application/xml',
  'application/*+xml',
  'application/graphql-response+json',
  'image/svg+xml',
  'text/*',
];

const MEDIA_RANGE = /^[a-z0-9!#$&^_.+-]+\/(\*|[a-z0-9!#$&^_.+-]*\*?[a-z0-9!#$&^_.+-]*)$/;

export const CompressionSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe('Compress answers for clients that accept it, on every route but those with compression: false'),
  algorithms: z
    .array(z.enum(COMPRESSION_ALGORITHMS))
    .min(1)
    .refine((list) => new Set(list).size === list.length, { message: 'an algorithm is listed twice' })
    .default(['zstd', 'br', 'gzip'])
    .describe(
      'Content codings in the order the gateway prefers them when the client accepts several with the same q-value; zstd is skipped on a Node version without it (Node 20)',
    ),
  minBytes: z
    .int()
    .min(0)
    .default(1024)
    .describe(
      'Answers with a Content-Length below this are sent as they are; answers of unknown length are compressed',
    ),
  types: z
    .array(
      z
        .string()
        .transform((s) => s.trim().toLowerCase())
        .refine((s) => MEDIA_RANGE.test(s), {
          message: 'expected a media type such as application/json, text/* or application/*+json',
        }),
    )
    .min(1)
    .default(DEFAULT_COMPRESSIBLE_TYPES)
    .describe(
      'Media types compressed: exact (application/json), a whole top-level type (text/*), or a structured suffix (application/*+json); text/event-stream never is',
    ),
  levels: z
    .strictObject({
      gzip: z.int().min(1).max(9).default(5).describe('gzip level, 1 (fastest) to 9 (smallest)'),
      br: z.int().min(0).max(11).default(3).describe('Brotli quality, 0 (fastest) to 11 (smallest)'),
      zstd: z.int().min(1).max(19).default(3).describe('zstd level, 1 (fastest) to 19 (smallest)'),
    })
    .prefault({})
    .describe('Compression level of each algorithm (docs/compression.md has the measurements behind the defaults)'),
});

export type CompressionConfig = z.output<typeof CompressionSchema>;
