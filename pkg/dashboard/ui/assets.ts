import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { Context } from 'hono';
import { HASHED } from './bundle.ts';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

/** Where the UI's files are: beside this module, in the source tree and in dist/ (the build copies them). */
export const STATIC_DIR = join(import.meta.dirname, 'static');

/**
 * The UI's static files — the favicon and the bundle (bundle.ts) — read once at start: no CDN.
 * Served with an
 * ETag and `no-cache`, so a new release is picked up at once and an unchanged file costs a 304.
 */
export class Assets {
  readonly #files = new Map<string, Asset>();

  constructor(dir = STATIC_DIR) {
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      const type = TYPES[extname(entry.name)];
      if (!type) continue;
      const body = new Uint8Array(readFileSync(path));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      this.#files.set(relative(dir, path).split(sep).join('/'), { body, type, etag });
    }
  }

  has(name: string): boolean {
    return this.#files.has(name);
  }

  /** The bundle's manifest (`app/manifest.json`): logical name → content-hashed file. */
  bundle(): Record<string, string> {
    const m = this.#files.get('app/manifest.json');
    return m ? (JSON.parse(Buffer.from(m.body).toString('utf8')) as Record<string, string>) : {};
  }

  /** The file as a response, or undefined when there is no such asset. */
  serve(c: Context, name: string): Response | undefined {
    const asset = this.#files.get(name);
    if (!asset) return undefined;
    // A content-hashed bundle never changes under its name: the browser keeps it without asking.
    const cache = HASHED.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache';
    const headers = { etag: asset.etag, 'cache-control': cache, 'x-content-type-options': 'nosniff' };
    if (c.req.header('if-none-match') === asset.etag) return c.newResponse(null, { status: 304, headers });
    return c.newResponse(asset.body, { headers: { ...headers, 'content-type': asset.type } });
  }
}
