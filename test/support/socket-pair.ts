/**
 * Two connected in-memory stream ends for tunnel tests: what one writes, the other reads; end()
 * is a FIN, destroy() goes away without one.
 */
import { Duplex } from 'node:stream';

export function socketPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  const make = (peer: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        peer().push(chunk);
        cb();
      },
      final(cb) {
        peer().push(null);
        cb();
      },
    });
  ends.push(
    make(() => ends[1]!),
    make(() => ends[0]!),
  );
  return [ends[0]!, ends[1]!];
}
