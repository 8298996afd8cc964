/**
 * Rules on a route's `request` (request validation) that the schema cannot express: the JSON
 * Schema must be readable and valid (compiled here with the same compiler the gateway uses), and
 * the route must read its whole body before the backend call, which streaming routes do not.
 */
import type { AddProblem } from './problems.js';
import { isRecord } from './raw-value.js';
import { compileJsonSchema, readSchema } from './json-schema.js';

/** Checks every route's `request`; schema files are read relative to `baseDir` (the config file's folder). */
export function requestRules(raw: Record<string, unknown>, baseDir: string, at: AddProblem): void {
  if (!Array.isArray(raw.routes)) return;
  raw.routes.forEach((route: unknown, index: number) => {
    if (!isRecord(route) || !isRecord(route.request)) return;
    const label = `routes[${index}]`;
    if (route.isSSE === true || route.isWebSocket === true)
      at(
        ['routes', index, 'request'],
        `${label}.request: a streaming route (isSSE or isWebSocket) cannot validate bodies`,
      );
    if (route.requestBuffering === false)
      at(
        ['routes', index, 'requestBuffering'],
        `${label}.requestBuffering: false streams the body to the backend, so request.schema cannot check it first`,
      );
    const source = route.request.schema;
    if (typeof source !== 'string' && !isRecord(source)) return;
    const where = ['routes', index, 'request', 'schema'];
    let schema: unknown;
    try {
      schema = readSchema(source, baseDir);
    } catch (err) {
      at(where, `${label}.request.schema: cannot read "${String(source)}" as JSON: ${(err as Error).message}`);
      return;
    }
    try {
      compileJsonSchema(schema);
    } catch (err) {
      at(where, `${label}.request.schema: not a valid JSON Schema: ${(err as Error).message}`);
    }
  });
}
