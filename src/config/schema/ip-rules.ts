/** `config.ipRules` and a route's `ipRules`: client address ranges let in or refused (docs/security.md). */
import { z } from 'zod';

const cidrList = (what: string) =>
  z
    .array(z.string().min(1))
    .default([])
    .describe(`${what}: IPv4 or IPv6 addresses and CIDRs (10.0.0.0/8, 2001:db8::/32); an address alone is /32 or /128`);

export const IpRulesSchema = z
  .strictObject({
    allow: cidrList('Only these clients are let in when the list is not empty'),
    deny: cidrList('These clients are refused with 403, even when allow lists them'),
  })
  .describe('Client addresses let in or refused (403 GW_IP_FORBIDDEN) before any other work');

export type IpRulesConfig = z.output<typeof IpRulesSchema>;
