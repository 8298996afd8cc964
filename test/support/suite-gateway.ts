/**
 * The set-up most integration suites share: one backend and a gateway in front of it, started
 * before the tests of the enclosing `describe` and closed after them.
 */
import { after, before } from 'node:test';
import { startBackend, type TestBackend } from './backend.js';
import { closeAll, type Closable } from './close-all.js';
import { startGateway, type TestGateway } from './gateway.js';

/** What the tests of a suite read once its `before` hook has run. */
export interface SuiteGateway<B> {
  readonly gw: TestGateway;
  readonly backend: B;
}

/**
 * Registers the hooks of the enclosing `describe`: `start()` the backend (by default
 * `startBackend()`), then a gateway loaded from `yaml(backend)`; both close after the suite,
 * the gateway first.
 * @example const s = gatewayForSuite((b) => `routes:\n  - { method: GET, route: /a, service: ${b.host}, path: /a }`);
 */
export function gatewayForSuite(yaml: (backend: TestBackend) => string): SuiteGateway<TestBackend>;
export function gatewayForSuite<B extends Closable>(
  yaml: (backend: B) => string,
  start: () => Promise<B>,
): SuiteGateway<B>;
export function gatewayForSuite<B extends Closable>(
  yaml: (backend: B) => string,
  start?: () => Promise<B>,
): SuiteGateway<B> {
  // Without `start`, the first signature makes B a TestBackend, which startBackend() gives.
  const startIt = start ?? (startBackend as unknown as () => Promise<B>);
  let gw: TestGateway | undefined;
  let backend: B | undefined;
  before(async () => {
    backend = await startIt();
    gw = await startGateway(yaml(backend));
  });
  after(() => closeAll(gw, backend));
  return {
    get gw() {
      if (gw === undefined) throw new Error('the gateway is read before the suite started it');
      return gw;
    },
    get backend() {
      if (backend === undefined) throw new Error('the backend is read before the suite started it');
      return backend;
    },
  };
}
