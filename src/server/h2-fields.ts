/**
 * The header fields of an HTTP/2 answer before its head goes out (server/h2-response.ts): the
 * `setHeader` family of `ServerResponse`, and the trailers a gRPC answer adds.
 */
import { Stream } from 'node:stream';
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import { CONNECTION_SPECIFIC, HEADERS_SENT } from './h2-head.js';

export abstract class H2Fields extends Stream {
  /** The fields set with `setHeader`/`appendHeader`, made on the first one. */
  protected fields: OutgoingHttpHeaders | undefined = undefined;
  protected trailers: OutgoingHttpHeaders | undefined = undefined;
  sendDate = true;

  abstract get headersSent(): boolean;

  setHeader(name: string, value: number | string | readonly string[]): this {
    if (this.headersSent) throw Object.assign(new Error('Response has already been initiated.'), HEADERS_SENT);
    const key = name.toLowerCase();
    if (!CONNECTION_SPECIFIC.has(key)) (this.fields ??= {})[key] = value as OutgoingHttpHeader;
    return this;
  }
  appendHeader(name: string, value: string | readonly string[]): this {
    const key = name.toLowerCase();
    const before = this.fields?.[key];
    if (before === undefined) return this.setHeader(key, value);
    return this.setHeader(key, ([] as string[]).concat(before as string, value as string));
  }
  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.fields?.[name.toLowerCase()];
  }
  getHeaders(): OutgoingHttpHeaders {
    return { ...this.fields };
  }
  getHeaderNames(): string[] {
    return this.fields === undefined ? [] : Object.keys(this.fields);
  }
  hasHeader(name: string): boolean {
    return this.fields?.[name.toLowerCase()] !== undefined;
  }
  removeHeader(name: string): void {
    const key = name.toLowerCase();
    if (key === 'date') this.sendDate = false;
    else if (this.fields !== undefined) delete this.fields[key];
  }

  addTrailers(headers: OutgoingHttpHeaders): void {
    const trailers = (this.trailers ??= {});
    for (const name in headers) trailers[name.trim().toLowerCase()] = headers[name];
  }
}
