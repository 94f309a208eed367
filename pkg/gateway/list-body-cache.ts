import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { KubernetesObject } from '@kubernetes/client-node';

/** A serialized list response: the JSON bytes, their gzip form (made on first demand) and an ETag. */
export interface ListBody {
  json: Buffer;
  etag: string;
  gzip(): Buffer;
}

interface Entry {
  refs: KubernetesObject[];
  body: ListBody;
  /** What the entry holds: its JSON bytes and, at most as many again, their gzip form. */
  cost: number;
}

export interface ListBodyCacheLimits {
  maxEntries: number;
  maxBytes: number;
}

/** A few namespaces' lists of 1,000 objects (~1 MB of JSON each) per route family. */
const DEFAULT_LIMITS: ListBodyCacheLimits = { maxEntries: 512, maxBytes: 8 * 1024 * 1024 };

/**
 * The serialized body of a list response, reused while the listed objects are the same. The
 * informer replaces an object (new reference) on every change and a relist rebuilds them all, so
 * "same references in the same order" means "same content": a 1,000-object list is then answered
 * without copying, stringifying or compressing anything (the benchmark's hot path). Checking costs
 * one pointer comparison per object.
 *
 * The key is a namespace the caller names, so what is kept is bounded by bytes as well as entries,
 * and an empty list (any made-up namespace) is rendered each time, never kept: requests for
 * thousands of namespaces leave nothing behind. Entries own their bytes (see `listBody`).
 */
export class ListBodyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly limits: ListBodyCacheLimits;
  private held = 0;

  constructor(limits: Partial<ListBodyCacheLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes the entries hold (each counted with room for its gzip form). */
  get bytes(): number {
    return this.held;
  }

  body(key: string, items: KubernetesObject[], render: (items: KubernetesObject[]) => string): ListBody {
    const hit = this.entries.get(key);
    if (hit && sameRefs(hit.refs, items)) return hit.body;
    const body = listBody(render(items));
    this.remove(key);
    const cost = 2 * body.json.length;
    if (items.length === 0 || cost > this.limits.maxBytes) return body;
    this.entries.set(key, { refs: items, body, cost });
    this.held += cost;
    while (this.entries.size > this.limits.maxEntries || this.held > this.limits.maxBytes) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.remove(oldest);
    }
    return body;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.held -= entry.cost;
  }
}

/**
 * A list body whose bytes are its own. `Buffer.from` of a short string, and zlib's output, are
 * slices of a pooled 64 KiB slab that other requests share: kept in a cache, each such slice would
 * keep its whole slab alive (512 small entries held ~38 MB that way).
 */
export function listBody(text: string): ListBody {
  const json = ownBytes(Buffer.from(text));
  let gz: Buffer | undefined;
  return {
    json,
    etag: `"${createHash('sha1').update(json).digest('base64url')}"`,
    gzip: () => {
      gz ??= ownBytes(gzipSync(json, { level: 6 }));
      return gz;
    },
  };
}

/** An exact-size copy outside the Buffer pool (the bytes alone, no shared slab behind them). */
function ownBytes(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.buffer.byteLength === b.length) return b;
  const own = Buffer.allocUnsafeSlow(b.length);
  b.copy(own);
  return own;
}

function sameRefs(a: KubernetesObject[], b: KubernetesObject[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export const byName = (a: KubernetesObject, b: KubernetesObject) => {
  const x = a.metadata?.name ?? '';
  const y = b.metadata?.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
};
