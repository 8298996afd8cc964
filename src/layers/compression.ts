/**
 * Response compression on a route that compresses (docs/compression.md): the client's
 * `Accept-Encoding` chooses the coding, and the answer, whoever writes it, is compressed on its
 * way out when its head allows (response/compression/compress-response.ts). A HEAD answer has no
 * body to compress; it gets `Vary` like the GET it stands for.
 */
import type { CompressionConfig } from '../config/schema.js';
import type { Layer } from '../pipeline/types.js';
import { createEncodingChooser } from '../response/compression/accept-encoding.js';
import { compileCompressibleTypes } from '../response/compression/compressible.js';
import { compressResponse, type CompressionPolicy } from '../response/compression/compress-response.js';
import { createEncoders } from '../response/compression/encoders.js';

/** The policy of one configuration's `compression` settings, made at config load. */
export function compileCompression(config: CompressionConfig): CompressionPolicy {
  const encoders = createEncoders(config);
  return {
    choose: createEncodingChooser(encoders.offered),
    isCompressible: compileCompressibleTypes(config.types),
    minBytes: config.minBytes,
    encoders,
  };
}

export function compressionLayer(policy: CompressionPolicy): Layer {
  return (next) => (ex) => {
    const { req } = ex;
    const coding = req.method === 'HEAD' ? undefined : policy.choose(req.headers['accept-encoding']);
    compressResponse(ex.res, coding, policy);
    return next(ex);
  };
}
