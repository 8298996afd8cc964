/**
 * `/metrics` under `--workers N`: every worker has its own registry, and a scrape reaches one
 * worker only. That worker asks the primary, which collects every worker's metrics with
 * prom-client's AggregatorRegistry (counters and histograms summed; gauges as each declares) and
 * sends the text back. Without a cluster none of this is loaded.
 */
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const REQUEST = 'portico:metrics:req';
const RESPONSE = 'portico:metrics:res';

interface MetricsMessage {
  readonly type: string;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

function isMetricsMessage(m: unknown): m is MetricsMessage {
  return (
    typeof m === 'object' &&
    m !== null &&
    typeof (m as MetricsMessage).type === 'string' &&
    typeof (m as MetricsMessage).id === 'number'
  );
}

/** Primary side: answers workers' requests for the aggregated metrics of the whole cluster. */
export function servePrimaryMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMetricsMessage(message) || message.type !== REQUEST) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: RESPONSE, id: message.id, text }),
      (err: unknown) => worker.send({ type: RESPONSE, id: message.id, error: (err as Error).message }),
    );
  });
}

/** Worker side: registers `registry` for aggregation and returns the renderer `/metrics` uses. */
export function clusterMetricsRenderer(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's listener that answers the primary's collection.
  new AggregatorRegistry();
  let next = 0;
  const waiting = new Map<
    number,
    { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }
  >();
  process.on('message', (message: unknown) => {
    if (!isMetricsMessage(message) || message.type !== RESPONSE) return;
    const w = waiting.get(message.id);
    if (w === undefined) return;
    waiting.delete(message.id);
    clearTimeout(w.timer);
    if (message.text !== undefined) w.resolve(message.text);
    else w.reject(new Error(message.error ?? 'no metrics'));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('primary did not answer in time'));
      }, 6_000);
      waiting.set(id, { resolve, reject, timer });
      process.send?.({ type: REQUEST, id });
    });
}

/** True in a worker started by `portico start --workers N`. */
export function inPorticoCluster(env: NodeJS.ProcessEnv = process.env): boolean {
  return cluster.isWorker && env.PORTICO_CLUSTER === '1';
}
