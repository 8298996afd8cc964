/**
 * The status page's files (written in src/admin/page/, compiled in as page-files.generated.ts),
 * prepared once when the admin listener is created: their gzip form and an ETag. Nothing comes
 * from a CDN: the page works offline.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { PAGE_FILES } from './page-files.generated.js';

export interface PageFile {
  readonly type: string;
  readonly body: Buffer;
  readonly gzip: Buffer;
  readonly etag: string;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
};

/** Where a page gets the sign-out button (behind a token) or the login form's complaint. */
const SLOT = '<!-- slot -->';
const SIGN_OUT = '<form method="post" action="/logout" class="sign-out"><button type="submit">Sign out</button></form>';
const LOGIN_FAILED = '<p class="login-error" role="alert">That token is not the one configured.</p>';

/** The page's files by name: each of `FILES`, and the variants made from them (`index-token.html`, `login-failed.html`). */
export function loadPageFiles(sources: Readonly<Record<string, string>> = PAGE_FILES): ReadonlyMap<string, PageFile> {
  const files = new Map<string, PageFile>();
  const text = (name: string) => sources[name]!;
  const add = (name: string, content: string) => files.set(name, pageFile(name, Buffer.from(content)));
  for (const name of ['dashboard.css', 'dashboard.js']) add(name, text(name));
  const index = text('index.html');
  const login = text('login.html');
  add('index.html', index.replace(SLOT, ''));
  add('index-token.html', index.replace(SLOT, SIGN_OUT));
  add('login.html', login.replace(SLOT, ''));
  add('login-failed.html', login.replace(SLOT, LOGIN_FAILED));
  return files;
}

function pageFile(name: string, body: Buffer): PageFile {
  return {
    type: TYPES[name.slice(name.lastIndexOf('.') + 1)]!,
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`,
  };
}

/** Answers with `file`: gzip when the client takes it, 304 when it has this version. */
export function sendPageFile(req: IncomingMessage, res: ServerResponse, file: PageFile, status = 200): void {
  if (status === 200 && req.headers['if-none-match'] === file.etag) {
    res.writeHead(304, { etag: file.etag });
    res.end();
    return;
  }
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? file.gzip : file.body;
  res.writeHead(status, {
    'content-type': file.type,
    'content-length': body.length,
    'cache-control': 'no-cache',
    vary: 'accept-encoding',
    etag: file.etag,
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  res.end(body);
}
