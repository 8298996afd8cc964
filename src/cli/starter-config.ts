/**
 * The file `portico init` writes: one public route that works as written, and the features most
 * users add next (authentication, a protected route with response mapping) as commented-out
 * examples. The examples are kept here as YAML and commented out when written, so a test can
 * switch them on and check that they are valid too.
 */

export interface StarterOptions {
  /** Where editors find the JSON Schema, relative to the written file (the `$schema` line). */
  readonly schemaRef: string;
  /** Writes the examples uncommented (tests: the examples must stay valid). */
  readonly examplesEnabled?: boolean;
}

const AUTH_EXAMPLE = `auth:
  defaultProtected: true      # every route needs a valid JWT unless it says public: true
  secret: \${JWT_SECRET}       # HS256 secret from the environment; portico token signs test tokens`;

const MAPPING_EXAMPLE = `- method: GET
  route: /orders/{id}
  service: \${BACKEND_URL:-http://localhost:3000}
  path: /orders/{id}
  mapping:                    # each answer gets its customer, fetched from another service
    - path: /customers/{customerId}
      service: http://localhost:3001
      tag: customer
      removeKeyMapping: true  # drop customerId once customer is set`;

/** Indents every line of `block` by `indent` spaces, commented out unless `enabled`. */
function place(block: string, indent: number, enabled: boolean): string {
  const pad = ' '.repeat(indent);
  return block
    .split('\n')
    .map((line) => (enabled ? `${pad}${line}` : `${pad}# ${line}`))
    .join('\n');
}

/** The starter `gateway.yaml`. */
export function starterConfig(options: StarterOptions): string {
  const on = options.examplesEnabled ?? false;
  return `# yaml-language-server: $schema=${options.schemaRef}
# Portico gateway configuration, written by \`portico init\`.
# Check it:  portico check        Serve it:  portico start        Route table:  portico routes
# Any string may read the environment: \${NAME}, or \${NAME:-default} when NAME is unset.

config:
  port: 8080                  # --port or $PORT override it
  basePath: /api              # every route below is served under this prefix
  # Uncomment to require a token on every route that is not public:
${place(AUTH_EXAMPLE, 2, on)}

routes:
  # GET /api/hello on the gateway is GET /hello on your backend.
  - method: GET
    route: /hello
    service: \${BACKEND_URL:-http://localhost:3000}
    path: /hello
    public: true

  # A protected route with a path parameter and response mapping:
${place(MAPPING_EXAMPLE, 2, on)}
`;
}
