/**
 * The image works (issue 12, item 4) although docker cannot build it here: the Dockerfile's tree is
 * built once (test/install/image.ts: its COPY and RUN lines, `npm run build` included, production
 * dependencies only) and each command starts from it the way the image runs it — `node
 * dist/cmd/berth.js <cmd>` with the image's ENV, a PATH holding nothing but `node` (no openssl, no
 * shell), a read-only HOME and working directory, and a writable /tmp only.
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createNamespace } from '../support/kube.ts';
import { ROOT, type Spawned, spawnProcess } from '../support/process.ts';
import { buildImageTree, type ImageTree } from './image.ts';

const ctx = mkdtempSync(join(tmpdir(), 'berth-image-'));
let image: ImageTree;
let env: NodeJS.ProcessEnv;
let ns: string;
const procs: Spawned[] = [];

/** Every file under `dir` with size and mtime, symlinks not followed: what a write would change. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => !d.isSymbolicLink())
    .map((d) => {
      const p = join(d.parentPath, d.name);
      const s = statSync(p);
      return `${relative(dir, p)} ${s.size} ${s.mtimeMs}`;
    })
    .sort();
}

/** Read-only for the test's user; root ignores modes, so the snapshots check for writes too. */
function readOnly(dir: string): void {
  for (const d of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (!d.isSymbolicLink()) chmodSync(join(d.parentPath, d.name), d.isDirectory() ? 0o555 : 0o444);
  chmodSync(dir, 0o555);
}

beforeAll(async () => {
  image = await buildImageTree(ctx);
  const bin = join(ctx, 'bin');
  const home = join(ctx, 'home');
  const tmp = join(ctx, 'tmp');
  for (const d of [bin, home, tmp]) mkdirSync(d);
  symlinkSync(process.execPath, join(bin, 'node')); // the image's Node 24, and nothing else
  readOnly(home);
  readOnly(join(image.app, 'dist'));
  chmodSync(image.app, 0o555);
  env = { ...image.env, PATH: bin, HOME: home, TMPDIR: tmp, LOG_LEVEL: 'info' };
  ns = await createNamespace('dist-image');
}, 600_000);

afterAll(async () => {
  for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  chmodSync(image?.app ?? ctx, 0o755);
  rmSync(ctx, { recursive: true, force: true, maxRetries: 2 });
});

const start = (args: string[], extra: NodeJS.ProcessEnv = {}) => {
  const [command = 'node', ...entry] = image.entrypoint;
  const p = spawnProcess(command, [...entry, ...args], { cwd: image.app, env: { ...env, ...extra } });
  procs.push(p);
  return p;
};

function httpsStatus(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    r.on('error', reject);
    r.end();
  });
}

describe('the image built from the Dockerfile', () => {
  it('is built by npm run build, runs as a numeric non-root user, and carries the SQL migrations', () => {
    expect(image.ran).toContain('npm run build');
    expect(image.user).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
    expect(image.env.NODE_ENV).toBe('production');
    expect(image.entrypoint.slice(0, 2)).toEqual(['node', join(image.app, 'dist', 'cmd', 'berth.js')]);
    const migrations = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort();
    const shipped = join(image.app, 'dist', 'pkg', 'broker', 'pg', 'migrations');
    expect(migrations(shipped)).toEqual(migrations(join(ROOT, 'pkg', 'broker', 'pg', 'migrations')));
    expect(migrations(shipped)).toContain(join('meta', '_journal.json'));
    // Dev dependencies are pruned: the compiler and the test runner are not in the image.
    const modules = readdirSync(join(image.app, 'node_modules'));
    expect(modules).toEqual(expect.arrayContaining(['hono', 'pg', 'selfsigned']));
    expect(modules).not.toEqual(expect.arrayContaining(['typescript']));
    expect(modules).not.toContain('vitest');
  });

  it('starts every command from dist/ with no openssl, shell or writable file but /tmp', async () => {
    const before = [snapshot(image.app), snapshot(env.HOME as string)];
    const kubeconfig = { KUBECONFIG: inject('kubeconfig') };
    // Exports decoded on the thread whose entry is the tsc-emitted module beside the decoder's
    // (the CLI itself is bundled: hack/bundle-cli.ts).
    const broker = start(['broker', '--port', '0'], { OTLP_DECODE_THREAD: 'on' });
    const api = start(['api', '--port', '0'], { ...kubeconfig, NAMESPACE: ns });
    const controller = start(
      ['controller', '--namespace', ns, '--port', '0', '--metrics-port', '0', '--no-leader-elect'],
      kubeconfig,
    );
    const help = start(['migrate', '--help']);

    const brokerPort = JSON.parse(await broker.waitForLine(/broker listening/, 120_000)).port;
    expect((await fetch(`http://127.0.0.1:${brokerPort}/health`)).status).toBe(200);
    // The bundle keeps zod's English messages (its other locales are left out of it).
    const invalid = await fetch(`http://127.0.0.1:${brokerPort}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: 5 }),
    });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).error.details.issues).toEqual([
      { path: 'sessionId', message: 'Invalid input: expected string, received number' },
    ]);
    const traceId = 'ab'.repeat(16);
    const exported = await fetch(`http://127.0.0.1:${brokerPort}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId,
                    spanId: 'cd'.repeat(8),
                    name: 'dist',
                    startTimeUnixNano: '1',
                    endTimeUnixNano: '2',
                  },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(exported.status, await exported.text()).toBe(200);
    const traces = await (await fetch(`http://127.0.0.1:${brokerPort}/traces/${traceId}`)).json();
    expect(JSON.stringify(traces)).toContain('"name":"dist"');

    const apiPort = JSON.parse(await api.waitForLine(/"msg":"api listening"/, 120_000)).port;
    expect((await fetch(`http://127.0.0.1:${apiPort}/health`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${apiPort}/v1/namespaces/${ns}/agents`)).status).toBe(200);

    // The dashboard serves its UI files from dist/ and proxies to the API.
    const dashboard = start(['dashboard', '--port', '0'], { API_SERVICE_URL: `http://127.0.0.1:${apiPort}` });
    const ui = `http://127.0.0.1:${JSON.parse(await dashboard.waitForLine(/"msg":"dashboard listening"/, 60_000)).port}`;
    for (const path of ['/', '/static/app/manifest.json', `/api/v1/namespaces/${ns}/agents`])
      expect((await fetch(`${ui}${path}`)).status, path).toBe(200);
    // The bundle the build made (npm run build) is what the shell links, shipped in dist/.
    const shell = await (await fetch(`${ui}/`)).text();
    const bundle = [...shell.matchAll(/(?:src|href)="(\/static\/app\/main-[A-Z0-9]+\.(?:js|css))"/g)].map(
      (m) => m[1],
    );
    expect(bundle.length).toBe(2);
    for (const path of bundle) expect((await fetch(`${ui}${path}`)).status, path).toBe(200);

    const ready = JSON.parse(await controller.waitForLine(/"msg":"ready"/, 120_000));
    expect(await httpsStatus(ready.metricsPort, '/metrics')).toBe(200); // self-signed, in-process
    expect((await fetch(`http://127.0.0.1:${ready.probesPort}/readyz`)).status).toBe(200);

    expect(await help.exited).toBe(0);
    expect(help.output()).toContain('Usage: berth migrate');

    for (const p of [broker, api, controller, dashboard]) {
      p.proc.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(p.output()).not.toMatch(
        /openssl|EACCES|EROFS|ENOENT|ERR_MODULE_NOT_FOUND|thread (failed|exited)/,
      );
    }
    expect([snapshot(image.app), snapshot(env.HOME as string)]).toEqual(before);
  });

  it('runs the CLI as a bundle: an idle broker loads a few dozen module files, not one per source', async () => {
    // Every file: URL the ESM loader resolves in the broker process, printed as it exits.
    const hook = join(env.TMPDIR as string, 'count-modules.mjs');
    writeFileSync(
      hook,
      `import { registerHooks } from 'node:module';
const files = new Set();
registerHooks({ resolve(s, c, next) { const r = next(s, c); if (r.url.startsWith('file:')) files.add(r.url); return r; } });
process.on('exit', () => process.stderr.write('modules ' + JSON.stringify([...files]) + '\\n'));`,
    );
    const broker = start(['broker', '--port', '0'], { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` });
    await broker.waitForLine(/broker listening/, 60_000);
    broker.proc.kill('SIGTERM');
    expect(await broker.exited).toBe(0);
    const files: string[] = JSON.parse(broker.output().match(/^modules (.*)$/m)?.[1] ?? 'null');
    const own = files.filter((f) => f.includes('/dist/'));
    expect(own.length, own.join('\n')).toBeGreaterThan(1);
    // Unbundled, this was ~480 files (~110 of them dist/pkg modules).
    expect(files.length, files.join('\n')).toBeLessThan(40);
    expect(
      own.every((f) => /\/dist\/cmd\/(berth|chunk-\w+)\.js$/.test(f)),
      own.join('\n'),
    ).toBe(true);
  });

  it('an idle broker answers probes without loading fetch, TLS or zlib, and its first request loads what it needs', async () => {
    // The built-in modules the process has loaded, printed on SIGUSR2.
    const hook = join(env.TMPDIR as string, 'builtins.cjs');
    writeFileSync(
      hook,
      `process.on('SIGUSR2', () => process.stderr.write('builtins ' + JSON.stringify(process.moduleLoadList) + '\\n'));`,
    );
    const broker = start(['broker', '--port', '0'], { NODE_OPTIONS: `--require=${hook}` });
    const line = await broker.waitForLine(/broker listening/, 60_000);
    const url = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
    let asked = 0;
    const loaded = async () => {
      asked++;
      broker.proc.kill('SIGUSR2');
      const answers = () => broker.output().match(/^builtins .*$/gm) ?? [];
      await vi.waitFor(() => expect(answers().length).toBe(asked), { timeout: 10_000 });
      return new Set(JSON.parse((answers()[asked - 1] as string).slice('builtins '.length)) as string[]);
    };
    for (const path of ['/health', '/healthz', '/readyz', '/health?x=1']) {
      const res = await fetch(`${url}${path}`, { headers: { 'x-request-id': 'probe-1' } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('x-request-id')).toBe('probe-1');
      expect((await res.json()).status).toBe(path === '/readyz' ? 'ready' : 'ok');
    }
    const idle = await loaded();
    expect(idle.has('NativeModule http'), 'the detection itself').toBe(true);
    for (const m of [
      'internal/deps/undici/undici',
      'tls',
      'https',
      'zlib',
      'readline',
      'internal/fs/promises',
    ])
      expect(idle.has(`NativeModule ${m}`), m).toBe(false);
    const res = await fetch(`${url}/messages`);
    expect(res.status).toBe(200);
    expect((await res.json()).items).toEqual([]);
    expect((await loaded()).has('NativeModule internal/deps/undici/undici')).toBe(true);
    broker.proc.kill('SIGTERM');
    expect(await broker.exited).toBe(0);
  });

  it('exports its own spans over OTLP/HTTP from the bundle (the exporter’s dynamic import of http)', async () => {
    const received: string[] = [];
    const collector = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    try {
      const { port } = collector.address() as AddressInfo;
      const broker = start(['broker', '--port', '0'], {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      });
      const line = await broker.waitForLine(/broker listening/, 60_000);
      const url = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
      expect((await fetch(`${url}/messages`)).status).toBe(200);
      await vi.waitFor(() => expect(received).toContain('POST /v1/traces application/json'), {
        timeout: 15_000,
      });
      broker.proc.kill('SIGTERM');
      expect(await broker.exited).toBe(0);
      expect(broker.output()).not.toMatch(/is not a constructor|export failed/i);
    } finally {
      collector.close();
    }
  });

  it('berth migrate applies the shipped SQL migrations to an empty database', async () => {
    const url = inject('services').databaseUrl;
    if (!url) throw new Error(`PostgreSQL is needed: ${inject('services').databaseError}`);
    const db = `berth_dist_${ns.slice(-6)}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${db}`);
      const target = new URL(url);
      target.pathname = `/${db}`;
      const m = start(['migrate'], { DATABASE_URL: target.toString() });
      expect(await m.exited, m.output()).toBe(0);
      expect(m.output()).toMatch(/applied \d+ migration\(s\)/);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
    }
  });
});
