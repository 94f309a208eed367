/**
 * The dashboard UI's bundle: `ui/app/main.js` (Preact + htm pages) bundled with esbuild into
 * `ui/static/app/` — main.js, main.css, lazily loaded chunks — plus `schemas.json`, the JSON
 * Schemas of every kind's spec made from the zod schemas the CRDs come from (the forms read it).
 * `npm run build` (hack/build-dashboard.ts) makes it before copying static/ to dist/; a dashboard
 * started from the source tree rebuilds it when missing or older than its sources, so a checkout
 * works without a build step. The image and dist/ never build: esbuild is a devDependency.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { jsonSchemaOf } from '../../api/crd.ts';
import { ALL_KINDS } from '../../api/registry.ts';
import type { Logger } from '../../log/index.ts';

const UI_DIR = import.meta.dirname;
export const APP_SOURCES = join(UI_DIR, 'app');
export const BUNDLE_DIR = join(UI_DIR, 'static', 'app');
const API_SOURCES = join(UI_DIR, '..', '..', 'api');
/** Self-contained bundles (no shared chunk: one request each): the app, and three loaded on demand. */
const ENTRIES = {
  main: join(APP_SOURCES, 'main.js'),
  yaml: join(APP_SOURCES, 'vendor', 'yaml.js'),
  markdown: join(APP_SOURCES, 'vendor', 'markdown.js'),
  chart: join(APP_SOURCES, 'pages', 'chart.js'),
};
/** `{main.js: "main-<hash>.js", main.css: …, yaml.js: …, markdown.js: …, chart.js: …}`: what the shell links. */
const MANIFEST = join(BUNDLE_DIR, 'manifest.json');
/** Content-hashed names: served as immutable, so a page load asks for none of them again. */
export const HASHED = /-[A-Z0-9]{8}\.(js|css)$/;

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
    entryPoints: ENTRIES,
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    outdir: outDir,
    entryNames: '[name]-[hash]',
    assetNames: 'asset-[hash]',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const written: string[] = [];
  const manifest: Record<string, string> = {};
  for (const f of result.outputFiles) {
    writeAtomic(f.path, f.contents);
    const name = relative(outDir, f.path);
    written.push(name);
    manifest[name.replace(/-[A-Z0-9]{8}(\.\w+)$/, '$1')] = name;
  }
  writeAtomic(join(outDir, 'schemas.json'), JSON.stringify(kindSchemas()));
  writeAtomic(join(outDir, 'manifest.json'), JSON.stringify(manifest));
  written.push('schemas.json', 'manifest.json');
  // Earlier builds' hashed files go; a dashboard still serving one keeps it in memory (Assets).
  const keep = new Set(written);
  for (const f of readdirSync(outDir))
    if (!keep.has(f) && (HASHED.test(f) || /^(main|chunk-.*)\.(js|css)$/.test(f)))
      rmSync(join(outDir, f), { force: true });
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
  const built = mtime(MANIFEST);
  if (built >= 0 && built >= Math.max(newest(APP_SOURCES), newest(API_SOURCES))) return;
  const started = Date.now();
  const files = await buildBundle();
  logger.info({ files: files.length, ms: Date.now() - started }, 'dashboard UI bundled from source');
}
