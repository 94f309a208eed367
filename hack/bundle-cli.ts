/**
 * `npm run build`, after tsc: `dist/cmd/berth.js` becomes one esbuild bundle of the CLI, split so
 * that each command's code is a chunk imported only when that command runs (`dist/cmd/chunk-*.js`).
 *
 * Why: Node's ESM loader resolves every module on its own (a path walk, a package.json parse for each
 * bare specifier), and an idle broker loaded ~480 of them: their records, sources and the loader's own
 * optimised code stayed resident (~9 MB of the broker's idle RSS; docs/broker.md "Footprint").
 *
 * What stays as tsc emitted it: the rest of `dist/`, the modules run on their own — the worker threads'
 * entries, the control plane's node reaper, the dashboard's static files, the SQL migrations. A bundled
 * module's `import.meta.url` and `import.meta.dirname` are rewritten to its tsc-emitted twin's, so a
 * path it builds from its own location (a worker beside it, `migrations/`, `static/`) is the same as
 * when dist/ ran unbundled. Every output sits in dist/cmd/, which makes `../` from any chunk dist/.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { relative, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const outdir = resolve(root, 'dist', 'cmd');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

// A bundled CommonJS module still calls require() for Node's built-ins, and a few read __dirname.
// The built-ins are taken as `builtinsWithoutNamespace` does, for the same reason.
const banner = [
  "const __berthPath = process.getBuiltinModule('node:url').fileURLToPath;",
  "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);",
  'const __filename = __berthPath(import.meta.url);',
  "const __dirname = __berthPath(new URL('.', import.meta.url));",
].join(' ');

/** `import.meta.url`/`dirname` of a project module → those of its tsc-emitted twin in dist/. */
const metaOfTwin: Plugin = {
  name: 'import-meta-of-twin',
  setup(b) {
    b.onLoad({ filter: /\/(cmd|pkg)\/.*\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.')) return { contents: source, loader: 'ts' };
      const twin = relative(root, args.path).replace(/\.ts$/, '.js');
      const url = `new URL(${JSON.stringify(`../${twin}`)}, import.meta.url).href`;
      const dir = `__berthPath(new URL(${JSON.stringify(`../${twin.replace(/[^/]+$/, '')}`)}, import.meta.url)).replace(/\\/$/, '')`;
      const contents = source
        .replaceAll('import.meta.url', `(${url})`)
        .replaceAll('import.meta.dirname', `(${dir})`)
        .replaceAll('import.meta.filename', `__berthPath(${url})`);
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * zod's `locales` namespace (its ~60 translations of error messages, ~370 kB of source) as English
 * alone: Berth's errors are in English (zod is configured with `en` by default and nothing here
 * calls `z.config` with another locale), and the namespace export keeps every translation in the
 * bundle, where each idle process parsed and kept its source.
 */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? { path: resolve(args.importer, '..', '..', 'locales', 'index.js'), namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(resolve(args.path, '..', 'en.js'))};`,
      loader: 'js',
      resolveDir: resolve(args.path, '..'),
    }));
  },
};

/**
 * Node's built-ins as plain CommonJS objects (`process.getBuiltinModule`), not as ES module
 * namespaces. To build a built-in's namespace Node reads every export, its lazy getters too:
 * `node:fs` loads `fs.promises` (and with it readline and the REPL's history), `node:http` its
 * `WebSocket` (Node's whole fetch implementation, undici), `node:process` the diagnostic report,
 * `node:crypto` its Web Crypto. An idle broker held ~2 MB for
 * modules it never called (docs/broker.md "Footprint"). esbuild's interop reads a property when code
 * uses it, so named imports still work and a lazy getter runs only if someone reads it.
 */
const builtinsWithoutNamespace: Plugin = {
  name: 'builtins-without-namespace',
  setup(b) {
    // Not a dynamic `import('http')`: its caller wants the namespace's named exports (the OTLP
    // exporter's `{ Agent }`), which a CommonJS stand-in would give only as `default`.
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) =>
      isBuiltin(args.path) && args.kind !== 'dynamic-import'
        ? { path: args.path, namespace: 'node-builtin' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => ({
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * prom-client's Pushgateway, which Berth never uses, requires `https` and `zlib` when prom-client
 * loads: ~2.5 MB resident (TLS above all) in every idle process. In that one file they are taken
 * from Node when first called instead; every member it uses (`https.request`, `gzipSync`) is a function.
 */
const promClientPushLazy: Plugin = {
  name: 'prom-client-push-lazy',
  setup(b) {
    b.onResolve({ filter: /^(https|zlib)$/ }, (args) =>
      /[\\/]prom-client[\\/]lib[\\/]pushgateway\.js$/.test(args.importer)
        ? { path: args.path, namespace: 'lazy-builtin' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      contents: `const id = ${JSON.stringify(`node:${args.path}`)};
module.exports = new Proxy({}, { get: (_, key) => (...a) => process.getBuiltinModule(id)[key](...a) });`,
      loader: 'js',
    }));
  },
};

// Chunks of an earlier build would stay beside the new ones under other hashes.
for (const f of readdirSync(outdir)) if (/^chunk-\w+\.js(\.map)?$/.test(f)) rmSync(resolve(outdir, f));
// tsc's map of berth.js would describe the module the bundle replaces.
rmSync(resolve(outdir, 'berth.js.map'), { force: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: { berth: 'cmd/berth.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  chunkNames: 'chunk-[hash]',
  // Not esbuild's keepNames: it wraps every named function and closure in a __name() call at each
  // creation, which cost ~15 % of POST /messages throughput and ~8 MB of RSS under that load
  // (docs/broker.md). Names stay as written except where two modules of one chunk share a top-level
  // name: esbuild then appends a digit (a library that sets an error's name from new.target.name,
  // e.g. the MCP SDKs' OAuth errors, shows it; nothing here compares such names).
  keepNames: false,
  // Whitespace and syntax only: identifiers keep their names, so a stack trace still names its
  // functions. Comments go too — one non-ASCII character in a chunk made V8 hold that whole chunk's
  // source as a two-byte string. Positions map back to the TypeScript through the linked source
  // maps (`node --enable-source-maps`); without the sources' text inside, which the tree has.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  sourcesContent: false,
  // Development tools (esbuild for the dashboard's source mode) are never installed in the image;
  // optional native add-ons of dependencies are not installed at all.
  external: [...Object.keys(pkg.devDependencies), 'pg-native', 'cpu-features', 'ssh2'],
  banner: { js: banner },
  plugins: [metaOfTwin, zodEnglishOnly, promClientPushLazy, builtinsWithoutNamespace],
  logLevel: 'warning',
  metafile: true,
});
const outputs = Object.values(result.metafile.outputs);
const bytes = outputs.reduce((n, o) => n + o.bytes, 0);
console.log(`berth CLI bundle: ${outputs.length} files, ${(bytes / 1e6).toFixed(1)} MB in dist/cmd/`);
