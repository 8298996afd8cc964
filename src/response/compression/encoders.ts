/**
 * The gateway's content codings on node:zlib: a streaming encoder per answer, a one-shot encoder
 * for a body handed over whole, and the flush that lets a streamed answer's chunks out as they
 * come. zstd exists from Node 22.15 / 23.8 on; where it does not, it is simply not offered.
 */
import zlib, { type ZlibOptions, type BrotliOptions } from 'node:zlib';
import type { Transform } from 'node:stream';
import type { CompressionAlgorithm, CompressionConfig } from '../../config/schema.js';

/** node:zlib's zstd functions, typed here: @types/node for Node 20 does not declare them. */
interface ZstdZlib {
  createZstdCompress?(options?: { params?: Record<number, number> }): Transform & { flush(kind: number): void };
  zstdCompressSync?(buf: Buffer, options?: { params?: Record<number, number> }): Buffer;
  constants: { ZSTD_c_compressionLevel?: number; ZSTD_e_flush?: number };
}
const zstdZlib = zlib as unknown as ZstdZlib;

/** True when this Node version can produce zstd. */
export const HAS_ZSTD = typeof zstdZlib.createZstdCompress === 'function';

/** One answer's encoder: write the body in, read the coded bytes out; `flushNow` pushes out what it holds. */
export interface Encoder {
  readonly stream: Transform;
  flushNow(): void;
}

export interface Encoders {
  /** The codings offered, in the configured order, without those this Node version lacks. */
  readonly offered: readonly CompressionAlgorithm[];
  create(coding: CompressionAlgorithm): Encoder;
  /** The whole body at once, for answers handed over in one piece. */
  encodeSync(coding: CompressionAlgorithm, body: Buffer): Buffer;
}

/** The encoders of one configuration's levels. */
export function createEncoders(config: Pick<CompressionConfig, 'algorithms' | 'levels'>): Encoders {
  const { levels } = config;
  const gzip: ZlibOptions = { level: levels.gzip };
  const br: BrotliOptions = {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: levels.br,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
    },
  };
  const zstd = { params: { [zstdZlib.constants.ZSTD_c_compressionLevel ?? 100]: levels.zstd } };
  return {
    offered: config.algorithms.filter((a) => a !== 'zstd' || HAS_ZSTD),
    create(coding) {
      switch (coding) {
        case 'gzip': {
          const stream = zlib.createGzip(gzip);
          return { stream, flushNow: () => stream.flush(zlib.constants.Z_SYNC_FLUSH) };
        }
        case 'br': {
          const stream = zlib.createBrotliCompress(br);
          return { stream, flushNow: () => stream.flush(zlib.constants.BROTLI_OPERATION_FLUSH) };
        }
        case 'zstd': {
          const stream = zstdZlib.createZstdCompress!(zstd);
          return { stream, flushNow: () => stream.flush(zstdZlib.constants.ZSTD_e_flush ?? 1) };
        }
      }
    },
    encodeSync(coding, body) {
      switch (coding) {
        case 'gzip':
          return zlib.gzipSync(body, gzip);
        case 'br':
          return zlib.brotliCompressSync(body, br);
        case 'zstd':
          return zstdZlib.zstdCompressSync!(body, zstd);
      }
    },
  };
}
