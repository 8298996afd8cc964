/**
 * The worker thread of ./load-off-thread.ts: reads, parses and validates one configuration file
 * and posts the result back as plain data, the routes a few hundred at a time, each when the main
 * thread asks for more, so that the main thread, which goes on serving requests, reads each
 * message back in a stretch of a few ms.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readConfigText, parseConfigText } from './parse.js';
import { validateConfig } from './validate.js';
import { writtenTelemetryKeys } from './otel-env.js';
import { ROUTES_PER_MESSAGE, type LoadMessage, type LoadRequest } from './load-messages.js';

const { file, env } = workerData as LoadRequest;
const post = (message: LoadMessage) => parentPort!.postMessage(message);

const text = readConfigText(file);
const parsed = typeof text === 'string' ? parseConfigText(text, file, env) : text;
const v = validateConfig(parsed);
if (!v.ok) post({ kind: 'problems', problems: v.problems });
else {
  const { routes, ...rest } = v.config;
  post({
    kind: 'head',
    file: { ...rest, routes: [] },
    notices: v.notices,
    telemetryKeys: [...writtenTelemetryKeys(parsed.value)],
    // Only plugin options are located after validation (./load.ts withTracing), from this text.
    text: (v.config.plugins ?? []).length > 0 && typeof text === 'string' ? text : undefined,
  });
  // One message of routes per request of the main thread: a port hands every message waiting on
  // it over in one go, so routes posted all at once would be read back in one long stretch.
  let next = 0;
  const more = () => {
    if (next >= routes.length) {
      parentPort!.off('message', more);
      post({ kind: 'end' });
      return;
    }
    post({ kind: 'routes', routes: routes.slice(next, (next += ROUTES_PER_MESSAGE)) });
  };
  parentPort!.on('message', more);
}
