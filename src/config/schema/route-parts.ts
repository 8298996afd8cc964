/**
 * The pieces a route is built from: response-mapping rules, authorization requirements, field
 * rules, the backends of an aggregated route and header edits.
 */
import { z } from 'zod';

export const MappingRuleSchema = z
  .strictObject({
    path: z
      .string()
      .min(1)
      .describe('Endpoint on the mapped service; {field} is replaced by the item field of that name'),
    service: z.string().min(1).describe('Host of the mapped service: host:port, http://host:port or https://host'),
    tag: z.string().min(1).describe('Key under which the mapped data is added to the item'),
    removeKeyMapping: z
      .boolean()
      .default(false)
      .describe('Remove the placeholder field from the item once the tag is set'),
    batch: z
      .strictObject({
        path: z
          .string()
          .min(1)
          .describe(
            'Batch endpoint on the same service; {values} is replaced by the distinct values, percent-encoded and joined by separator',
          ),
        separator: z.string().min(1).default(',').describe('Text between two values in {values}, sent as written'),
        key: z.string().min(1).default('id').describe('Field of each object of an array answer that holds its value'),
        max: z.int().min(1).max(1000).default(100).describe('Most values in one batch call'),
      })
      .optional()
      .describe(
        "Ask for the rule's values in batches instead of one call per value (path then names the field and the cache key)",
      ),
  })
  .describe('A response-mapping rule');

const claimValue = z.union([z.string(), z.number(), z.boolean()]);

export const RequireSchema = z
  .strictObject({
    roles: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('The token holds at least one of these roles (claim auth.rolesClaim, else roles, then role)'),
    scopes: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('The token holds every one of these scopes (claim scope or scp, space-separated or a list)'),
    claims: z
      .record(z.string().min(1), z.union([claimValue, z.array(claimValue).min(1)]))
      .optional()
      .describe('Each claim equals this value, or one of a list of values (name as written, else a dot path)'),
  })
  .describe('Authorization rules a valid token must meet on this route');

const fieldPath = z.string().min(1);
export const FieldRulesShape = {
  allow: z
    .array(fieldPath)
    .min(1)
    .optional()
    .describe('Keep only these fields of the JSON answer (dot paths reach into nested objects and arrays of objects)'),
  deny: z.array(fieldPath).min(1).optional().describe('Drop these fields of the JSON answer (dot paths as in allow)'),
  rename: z
    .record(z.string().min(1), z.string().min(1))
    .optional()
    .describe('Rename top-level fields of the JSON answer: old name -> new name (after allow/deny)'),
};

export const AggregateBackendSchema = z
  .strictObject({
    service: z.string().describe('Backend: host:port, http://host:port or https://host'),
    path: z.string().describe("Backend path; may hold the route's {param}s and a query template, as a route's path"),
    group: z.string().min(1).optional().describe('Nest this answer under this key of the merged object'),
    target: z
      .string()
      .min(1)
      .optional()
      .describe('Take only this field of the answer (a dot path), before allow/deny/rename and group'),
    ...FieldRulesShape,
  })
  .describe('One backend of an aggregated route');

export const HeaderEditSchema = z.strictObject({
  set: z
    .record(z.string().min(1), z.string())
    .optional()
    .describe('Headers set, replacing any of the same name; values may hold {param} and {claims.NAME}'),
  remove: z.array(z.string().min(1)).optional().describe('Headers removed (case-insensitive names)'),
});
