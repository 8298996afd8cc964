/**
 * Building blocks more than one section uses: the HTTP methods a route or CORS may name, a
 * duration in seconds, and where a feature keeps its state.
 */
import { z } from 'zod';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** A positive number of seconds, with its description. */
export const seconds = (d: string) => z.number().positive().describe(d);

/** Where a feature keeps its state, `local` to each process or in `config.redis`, with its description. */
export const stateStore = (d: string) => z.enum(['local', 'redis']).default('local').describe(d);
