/** The `config.cors` section: cross-origin resource sharing, answered by the gateway. */
import { z } from 'zod';
import { HTTP_METHODS } from './primitives.js';

export const CorsSchema = z.strictObject({
  origins: z
    .union([z.literal('*'), z.array(z.string().min(1)).min(1)])
    .describe('Allowed origins ("https://app.example.com", "https://*.example.com"), or "*" for any'),
  methods: z
    .array(z.enum(HTTP_METHODS))
    .min(1)
    .default(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'])
    .describe('Methods a preflight may allow'),
  headers: z
    .union([z.literal('*'), z.array(z.string().min(1))])
    .default('*')
    .describe('Request headers a preflight may allow; "*" allows those the browser asks for'),
  exposedHeaders: z.array(z.string().min(1)).default(['X-Request-ID']).describe('Response headers scripts may read'),
  credentials: z.boolean().default(false).describe('Allow cookies and Authorization (never with origins "*")'),
  maxAgeSec: z.int().min(0).default(600).describe('How long browsers may cache a preflight answer'),
});

export type CorsConfig = z.output<typeof CorsSchema>;
