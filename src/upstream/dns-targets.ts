/**
 * DNS re-resolution of a named upstream's hostname targets (`dnsRefreshSec`, docs/upstreams.md):
 * every address a target's host name resolves to becomes a target of its own (a Kubernetes
 * headless service, several A records), with the declared target's port, weight and `Host`
 * header. Names are looked up at once and then every `dnsRefreshSec`; a change in the addresses
 * re-applies the upstream's targets (pools and health of the addresses that stay are kept). A
 * failed look-up or an empty answer keeps the addresses known before: DNS trouble never empties
 * an upstream. Until a name's first answer, the name itself is the target. IP literals are not
 * looked up.
 */
import { isIP } from 'node:net';
import type { Origin, UpstreamSpec } from '../config/types.js';

/** Resolves a host name to its addresses (node:dns `lookup` with `all: true`, injectable for tests). */
export type LookupAll = (hostname: string) => Promise<readonly string[]>;

export interface DnsTargetsOptions {
  readonly lookup: LookupAll;
  /** The expanded spec, when the addresses changed. */
  readonly changed: (spec: UpstreamSpec) => void;
  /** A look-up failed (the addresses known before are kept). */
  readonly failed: (hostname: string, err: unknown) => void;
}

export class DnsTargets {
  private readonly addresses = new Map<string, readonly string[]>();
  private timer: NodeJS.Timeout | undefined;
  private interval = 0;

  constructor(
    private spec: UpstreamSpec,
    private readonly options: DnsTargetsOptions,
  ) {
    this.update(spec);
  }

  /** Whether the spec names any target by host name. */
  static needed(spec: UpstreamSpec): boolean {
    return spec.targets.some((t) => isHostName(t.origin));
  }

  /** The spec with each host name target replaced by one target per known address. */
  expanded(): UpstreamSpec {
    const targets = this.spec.targets.flatMap((t) => {
      const known = isHostName(t.origin) ? this.addresses.get(t.origin.hostname) : undefined;
      if (known === undefined || known.length === 0) return [t];
      return known.map((address) => ({ origin: addressOrigin(t.origin, address), weight: t.weight }));
    });
    // Two names resolving to one address: one target, not two.
    const seen = new Set<string>();
    return { ...this.spec, targets: targets.filter((t) => !seen.has(t.origin.key) && seen.add(t.origin.key)) };
  }

  /** A (re)loaded spec: looked up at once, then every `dnsRefreshMs`. */
  update(spec: UpstreamSpec): void {
    this.spec = spec;
    const interval = spec.dnsRefreshMs;
    if (interval !== this.interval) {
      this.stop();
      this.interval = interval;
      this.timer = setInterval(() => void this.refresh(), interval);
      this.timer.unref();
    }
    void this.refresh();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.interval = 0;
  }

  /** Looks every host name up; re-applies the targets when an answer changed. */
  async refresh(): Promise<void> {
    const names = [...new Set(this.spec.targets.filter((t) => isHostName(t.origin)).map((t) => t.origin.hostname))];
    let changed = false;
    await Promise.all(
      names.map(async (name) => {
        let found: readonly string[];
        try {
          found = [...(await this.options.lookup(name))].sort();
        } catch (err) {
          this.options.failed(name, err);
          return;
        }
        if (found.length === 0) return;
        const before = this.addresses.get(name);
        if (before !== undefined && before.join() === found.join()) return;
        this.addresses.set(name, found);
        changed = true;
      }),
    );
    if (changed) this.options.changed(this.expanded());
  }
}

function isHostName(origin: Origin): boolean {
  return isIP(origin.hostname.replace(/^\[|\]$/g, '')) === 0;
}

/** A declared target's origin at one of its addresses: the name stays its `Host` and TLS server name. */
function addressOrigin(declared: Origin, address: string): Origin {
  const host = isIP(address) === 6 ? `[${address}]` : address;
  return {
    key: `${declared.protocol}//${host}:${declared.port}`,
    protocol: declared.protocol,
    hostname: host,
    port: declared.port,
    hostHeader: declared.hostHeader,
    serverName: declared.hostname,
  };
}
