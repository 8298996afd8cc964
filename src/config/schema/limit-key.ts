/** The `key` of `config.rateLimit`, `config.quotas` and their per-route forms. */
import { z } from 'zod';
import { LIMIT_KEY_MESSAGE, LIMIT_KEY_PATTERN } from '../syntax/limit-key.js';

/** A limit key (`ip`, `consumer`, `claims.NAME`, `header:NAME`), with its description. */
export const limitKey = (d: string) => z.string().regex(LIMIT_KEY_PATTERN, LIMIT_KEY_MESSAGE).describe(d);
