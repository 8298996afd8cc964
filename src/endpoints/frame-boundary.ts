/**
 * Where WebSocket frames begin in a byte stream (RFC 6455 5.2), followed without reading a
 * payload: a frame costs its 2 to 14 header bytes whatever its size, and a chunk holding the middle
 * of a large frame costs one subtraction. The tunnel relays bytes, never frames; a tunnel that may
 * have to add a close frame of its own (docs/streaming.md "Token expiry") follows the backend's
 * frames with this, so that its close frame never lands inside one of them. A control frame may
 * come between the fragments of a message (RFC 6455 5.4), so a frame boundary is enough.
 */

/** A frame header's length, from its second byte (mask bit and 7-bit length). */
function headerLength(second: number): number {
  const len7 = second & 0x7f;
  return 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (second & 0x80 ? 4 : 0);
}

/**
 * The header is read byte by byte into numbers, not copied into a buffer: every open tunnel has
 * one of these, and a buffer of its own would cost each tunnel an ArrayBuffer and its backing
 * store (docs/performance.md "Scale in connections").
 */
export class FrameBoundary {
  /** Header bytes of the next frame seen so far. */
  private have = 0;
  /** The header's length once its second byte is known; 2 before. */
  private need = 2;
  /** The 7-bit length of the header's second byte. */
  private len7 = 0;
  /** The extended payload length (16 or 64 bits, big-endian) read so far. */
  private extended = 0;
  /** Payload bytes of the current frame still to come. */
  private payloadLeft = 0;

  /** True when the bytes seen so far end with a whole frame. */
  get atBoundary(): boolean {
    return this.have === 0 && this.payloadLeft === 0;
  }

  /**
   * Follows the bytes of `chunk`. With `stopAtFrameEnd`, stops where the frame in progress ends.
   * Returns how many bytes of `chunk` it followed.
   */
  advance(chunk: Buffer, stopAtFrameEnd = false): number {
    let i = 0;
    while (i < chunk.length) {
      if (this.payloadLeft > 0) {
        const take = Math.min(this.payloadLeft, chunk.length - i);
        this.payloadLeft -= take;
        i += take;
      } else {
        this.header(chunk[i++]!);
      }
      if (stopAtFrameEnd && this.atBoundary) return i;
    }
    return i;
  }

  /** One header byte: the second gives the header's length, the extended length bytes follow it. */
  private header(byte: number): void {
    const at = this.have++;
    if (at === 1) {
      this.len7 = byte & 0x7f;
      this.extended = 0;
      this.need = headerLength(byte);
    } else if (at >= 2 && at < 2 + (this.len7 === 126 ? 2 : this.len7 === 127 ? 8 : 0)) {
      // Past 2^53 the sum loses its last bits, as any JavaScript number would; no frame is that long.
      this.extended = this.extended * 256 + byte;
    }
    if (this.have < this.need) return;
    this.payloadLeft = this.len7 < 126 ? this.len7 : this.extended;
    this.have = 0;
    this.need = 2;
  }
}

/** A close frame from the server (unmasked, RFC 6455 5.5.1): a status code and a short reason. */
export function closeFrame(code: number, reason: string): Buffer {
  const text = Buffer.from(reason, 'utf8');
  const frame = Buffer.alloc(4 + text.length);
  frame[0] = 0x88; // FIN, opcode 8 (close)
  frame[1] = 2 + text.length; // a control frame's payload is at most 125 bytes: reasons here are short
  frame.writeUInt16BE(code, 2);
  text.copy(frame, 4);
  return frame;
}
