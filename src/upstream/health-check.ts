/**
 * Active health checks of a named upstream's targets (`healthCheck:`, docs/upstreams.md): every
 * `intervalMs`, a GET of `path` on each target, through the target's own pool; a 2xx or 3xx within
 * `timeoutMs` passes. A target is unhealthy after `unhealthyThreshold` failures in a row and
 * healthy again after `healthyThreshold` passes in a row; unhealthy targets get no calls
 * (targets.ts), and when every target is unhealthy calls go to all of them. Targets start healthy:
 * a gateway that starts or reloads does not refuse traffic while its first checks run. One check
 * per target at a time; the timer does not keep the process alive.
 */
import type { UpstreamSpec } from '../config/types.js';
import type { CheckedTarget } from './types.js';
import { readCall } from './call/request.js';

type CheckSpec = NonNullable<UpstreamSpec['healthCheck']>;

export interface HealthCheckOptions<T extends CheckedTarget> {
  /** The targets now (they change on reload). */
  readonly targets: () => readonly T[];
  /** Called when a target turns unhealthy or healthy. */
  readonly changed: (target: T, healthy: boolean) => void;
}

export class ActiveHealthCheck<T extends CheckedTarget> {
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Set<T>();

  constructor(
    private spec: CheckSpec,
    private readonly options: HealthCheckOptions<T>,
  ) {
    this.schedule();
  }

  /** A reload's spec: the timer restarts when the interval changed. */
  update(spec: CheckSpec): void {
    const interval = spec.intervalMs !== this.spec.intervalMs;
    this.spec = spec;
    if (interval) this.schedule();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.stop();
    this.timer = setInterval(() => this.round(), this.spec.intervalMs);
    this.timer.unref();
  }

  private round(): void {
    for (const target of this.options.targets()) {
      if (this.running.has(target)) continue;
      this.running.add(target);
      void this.check(target).then((passed) => {
        this.running.delete(target);
        this.record(target, passed);
      });
    }
  }

  private async check(target: T): Promise<boolean> {
    const { spec } = this;
    const abort = AbortSignal.timeout(spec.timeoutMs);
    try {
      // A probe is not a client's call: it is not counted on the pool, nor reported.
      const request = {
        path: spec.path,
        headers: { host: target.pool.origin.hostHeader, 'user-agent': 'portico-health-check' },
        headersTimeoutMs: spec.timeoutMs,
        bodyTimeoutMs: spec.timeoutMs,
        signal: abort,
      };
      return await readCall({ dispatcher: target.pool.dispatcher }, request, undefined, async (res) => {
        await res.body.dump();
        return res.statusCode >= 200 && res.statusCode < 400;
      });
    } catch {
      return false;
    }
  }

  private record(target: T, passed: boolean): void {
    const h = target.health;
    if (passed) {
      h.checkFailures = 0;
      h.checkPasses++;
      if (h.down && h.checkPasses >= this.spec.healthyThreshold) {
        h.down = false;
        this.options.changed(target, true);
      }
    } else {
      h.checkPasses = 0;
      h.checkFailures++;
      if (!h.down && h.checkFailures >= this.spec.unhealthyThreshold) {
        h.down = true;
        this.options.changed(target, false);
      }
    }
  }
}
