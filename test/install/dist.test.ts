/**
 * The image works (issue 12, item 4) although docker cannot build it here: the Dockerfile's tree is
 * built once (test/install/image.ts: its COPY and RUN lines, `npm run build` included, production
 * dependencies only) and each command starts from it the way the image runs it — `node
 * dist/cmd/berth.js <cmd>` with the image's ENV, a PATH holding nothing but `node` (no openssl, no
 * shell), a read-only HOME and working directory, and a writable /tmp only.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
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
    const broker = start(['broker', '--port', '0']);
    const api = start(['api', '--port', '0'], { ...kubeconfig, NAMESPACE: ns });
    const controller = start(
      ['controller', '--namespace', ns, '--port', '0', '--metrics-port', '0', '--no-leader-elect'],
      kubeconfig,
    );
    const help = start(['migrate', '--help']);

    const brokerPort = JSON.parse(await broker.waitForLine(/broker listening/, 120_000)).port;
    expect((await fetch(`http://127.0.0.1:${brokerPort}/health`)).status).toBe(200);

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
      expect(p.output()).not.toMatch(/openssl|EACCES|EROFS|ENOENT/);
    }
    expect([snapshot(image.app), snapshot(env.HOME as string)]).toEqual(before);
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
