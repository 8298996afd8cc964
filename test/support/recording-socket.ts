import { Duplex } from 'node:stream';

/** A socket double for unit tests of code that writes raw HTTP: records every byte written. */
export class RecordingSocket extends Duplex {
  readonly written: Buffer[] = [];
  override _read(): void {}
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.written.push(Buffer.from(chunk));
    cb();
  }
  override _final(cb: () => void): void {
    // The peer closes when it saw our FIN.
    this.push(null);
    cb();
  }
  text(): string {
    return Buffer.concat(this.written).toString('utf8');
  }
}
