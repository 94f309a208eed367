/**
 * The dashboard UI's bundle: `ui/app/main.js` (Preact + htm pages) bundled with esbuild into
 * `ui/static/app/` — main.js, main.css, lazily loaded chunks — plus `schemas.json`, the JSON
 * Schemas of every kind's spec made from the zod schemas the CRDs come from (the forms read it).
 * `npm run build` (hack/build-dashboard.ts) makes it before copying static/ to dist/; a dashboard
 * started from the source tree rebuilds it when missing or older than its sources, so a checkout
 * works without a build step. The image and dist/ never build: esbuild is a devDependency.
 */
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { jsonSchemaOf } from '../../api/crd.ts';
import { ALL_KINDS } from '../../api/registry.ts';
import type { Logger } from '../../log/index.ts';

const UI_DIR = import.meta.dirname;
export const APP_SOURCES = join(UI_DIR, 'app');
export const BUNDLE_DIR = join(UI_DIR, 'static', 'app');
const API_SOURCES = join(UI_DIR, '..', '..', 'api');
const ENTRY = join(APP_SOURCES, 'main.js');
const MAIN = join(BUNDLE_DIR, 'main.js');

/** The spec schema of every kind, by plural: what the create and edit forms are generated from. */
export function kindSchemas(): Record<string, unknown> {
  return Object.fromEntries(
    ALL_KINDS.map((k) => [
      k.plural,
      { kind: k.kind, description: k.description, spec: jsonSchemaOf(k.spec) },
    ]),
  );
}

/** Writes a file whole or not at all: two dashboards building at once never read half a file. */
function writeAtomic(path: string, contents: string | Uint8Array) {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}

/** Bundles the UI into `outDir` (minified, ES2022, no source maps: nothing to fetch but our own files). */
export async function buildBundle(outDir = BUNDLE_DIR): Promise<string[]> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    splitting: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    outdir: outDir,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    assetNames: 'asset-[hash]',
    legalComments: 'none',
    logLevel: 'silent',
    loader: { '.svg': 'file', '.woff2': 'file' },
  });
  const written: string[] = [];
  for (const f of result.outputFiles) {
    writeAtomic(f.path, f.contents);
    written.push(relative(outDir, f.path));
  }
  writeAtomic(join(outDir, 'schemas.json'), JSON.stringify(kindSchemas()));
  written.push('schemas.json');
  return written;
}

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) t = Math.max(t, statSync(join(e.parentPath, e.name)).mtimeMs);
  return t;
}

const mtime = (path: string) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
};

/**
 * From the source tree (this module is `.ts`): builds the bundle when it is missing or older than
 * the UI's or the kinds' sources. Compiled (dist/, the image): the bundle shipped with it is used.
 */
export async function ensureBundle(logger: Logger): Promise<void> {
  if (!import.meta.url.endsWith('.ts')) return;
  const built = mtime(MAIN);
  if (built >= 0 && built >= Math.max(newest(APP_SOURCES), newest(API_SOURCES))) return;
  const started = Date.now();
  const files = await buildBundle();
  logger.info({ files: files.length, ms: Date.now() - started }, 'dashboard UI bundled from source');
}
