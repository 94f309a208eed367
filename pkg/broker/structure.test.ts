import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The broker's layering (docs/development.md "The broker's domains"), lowest first. A module may
 * import from its own unit (a folder, or a file at the top of pkg/broker) and from lower layers,
 * never from a unit beside it or above it. Sessions sit above messages and events: they roll them
 * up, and are handed to them as an interface each of those declares (`MessageRollup`,
 * `EventRollup`). A new folder or top-level file fails the test until it is placed here.
 */
const LAYERS: string[][] = [
  ['config.ts', 'pg'],
  ['core'],
  ['messages', 'events', 'chunks', 'traces', 'idempotency', 'auth'],
  ['sessions'],
  ['deps.ts'],
  ['health.ts', 'metrics.ts', 'stores.ts'],
  ['app.ts'],
  ['server.ts'],
];

/**
 * What an idle in-memory broker must not load (drizzle-orm and pg alone are ~90 MB of RSS;
 * docs/broker.md "Footprint"): the durable backends, and protobufjs, which only a protobuf OTLP
 * export needs (loaded by `require` at the first one).
 */
const DURABLE_PACKAGES = ['pg', 'drizzle-orm', 'ioredis', 'protobufjs'];

const ROOT = resolve(import.meta.dirname, '..');
const BROKER = join(ROOT, 'broker');

interface Import {
  from: string;
  /** A relative specifier resolved to a file; otherwise the package's specifier. */
  to: string;
  local: boolean;
  /** `import type` / `export type`: erased, never loaded. */
  typeOnly: boolean;
  dynamic: boolean;
}

// Top-level imports and re-exports start a line (biome formats them so); `import('...')` is anywhere.
const STATIC = /^(?:import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): Import[] {
  const src = readFileSync(file, 'utf8');
  const make = (spec: string, typeOnly: boolean, dynamic: boolean): Import => {
    const local = spec.startsWith('.');
    return { from: file, to: local ? resolve(dirname(file), spec) : spec, local, typeOnly, dynamic };
  };
  return [
    ...[...src.matchAll(STATIC)].map((m) => make(m[2] as string, !!m[1], false)),
    ...[...src.matchAll(DYNAMIC)].map((m) => make(m[1] as string, false, true)),
  ];
}

/** The broker's modules; tests are left out (nothing imports them, so they close no cycle). */
function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name));
}

const unitOf = (file: string) => relative(BROKER, file).split('/')[0] as string;
const layerOf = (unit: string) => LAYERS.findIndex((l) => l.includes(unit));
const short = (file: string) => relative(BROKER, file);

/** Every cycle's files (strongly connected components of more than one file, or a file importing itself). */
function cycles(edges: Import[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc = stack.splice(stack.indexOf(v));
    if (scc.length > 1 || next.get(v)?.includes(v)) out.push(scc.map(short));
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('pkg/broker structure', () => {
  const files = modules(BROKER);
  const inside = files.flatMap(importsOf).filter((i) => i.local && i.to.startsWith(`${BROKER}/`));

  it('places every unit of the broker in a layer', () => {
    const units = [...new Set(files.map(unitOf))];
    expect(units.filter((u) => layerOf(u) < 0)).toEqual([]);
  });

  it('has no import cycle, type-only and dynamic imports included', () => {
    expect(cycles(inside)).toEqual([]);
  });

  it('imports only within a unit or from a lower layer', () => {
    const upward = inside
      .filter((i) => unitOf(i.from) !== unitOf(i.to) && layerOf(unitOf(i.from)) <= layerOf(unitOf(i.to)))
      .map((i) => `${short(i.from)} -> ${short(i.to)}`);
    expect(upward).toEqual([]);
  });

  it('loads no durable backend into an in-memory broker: they are imported dynamically, when configured', () => {
    const seen = new Set<string>();
    const packages = new Set<string>();
    const load = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const i of importsOf(file)) {
        if (i.typeOnly || i.dynamic) continue;
        if (i.local) load(i.to);
        else packages.add(i.to);
      }
    };
    load(join(BROKER, 'server.ts'));
    const durable = [...packages].filter((p) =>
      DURABLE_PACKAGES.some((d) => p === d || p.startsWith(`${d}/`)),
    );
    expect(durable).toEqual([]);
    // The walk did follow the server's imports (a broken pattern would pass vacuously).
    expect(seen.size).toBeGreaterThan(50);
  });
});
