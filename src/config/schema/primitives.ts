/**
 * Building blocks more than one section uses: the HTTP methods a route or CORS may name, and a
 * duration in seconds.
 */
import { z } from 'zod';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** A positive number of seconds, with its description. */
export const seconds = (d: string) => z.number().positive().describe(d);
