/**
 * The hot path reports what happened as events; logs and metrics subscribe. A minimal typed bus:
 * emitting with no listener costs one array length check.
 */
import type {
  EventBus,
  GatewayEvents,
  Listener,
  MirrorDropReason,
  RedisUse,
  StreamKind,
  UpstreamCall,
} from './types.js';

// The contracts live in the leaf types.ts; the modules that emit and subscribe import them from here.
export type { EventBus, GatewayEvents, MirrorDropReason, RedisUse, StreamKind, UpstreamCall };

/** Creates an event bus: one per gateway, made at start. */
export function createEventBus(): EventBus {
  const listeners: { [K in keyof GatewayEvents]?: Listener<K>[] } = {};
  return {
    on(name, listener) {
      const list = (listeners[name] ??= []) as Listener<typeof name>[];
      list.push(listener);
      return () => {
        const i = list.indexOf(listener);
        if (i >= 0) list.splice(i, 1);
      };
    },
    emit(name, event) {
      const list = listeners[name];
      if (list === undefined) return;
      for (let i = 0; i < list.length; i++) (list[i] as Listener<typeof name>)(event);
    },
    has(name) {
      return (listeners[name]?.length ?? 0) > 0;
    },
  };
}
