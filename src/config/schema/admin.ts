/** The `config.admin` section: the admin listener, its status page and JSON API. */
import { z } from 'zod';

export const AdminSchema = z.strictObject({
  port: z
    .int()
    .min(0)
    .max(65535)
    .describe(
      'Port of the admin listener: the status page and its JSON API (docs/dashboard.md); never the public port',
    ),
  host: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe('Address of the admin listener; keep it on loopback unless token is set'),
  token: z
    .string()
    .min(16)
    .optional()
    .describe(
      'When set, the page and its API need it: "Authorization: Bearer <token>", or the login form (an HttpOnly cookie); write ${ADMIN_TOKEN}',
    ),
});

export type AdminConfig = z.output<typeof AdminSchema>;
