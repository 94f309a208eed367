import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';
import { basic, client } from './support.ts';

let ns: string;
let kubeconfigPath: string;
const running: Spawned[] = [];

beforeAll(async () => {
  ns = await createNamespace('gw-proc');
  // `berth api` reads KUBECONFIG's current context: make it the gateway identity's.
  const kc = kubeConfig('gateway');
  kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'berth-api-')), 'kubeconfig');
  writeFileSync(kubeconfigPath, kc.exportConfig(), { mode: 0o600 });
});
afterAll(() => {
  for (const p of running) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  if (kubeconfigPath) rmSync(dirname(kubeconfigPath), { recursive: true, force: true }); // a token
});

const start = (env: Record<string, string>, args: string[] = []) => {
  const p = spawnBerth(['api', '--port', '0', '--namespace', ns, ...args], {
    ...process.env,
    KUBECONFIG: kubeconfigPath,
    LOG_LEVEL: 'debug',
    ...env,
  });
  running.push(p);
  return p;
};

describe('berth api as a process', () => {
  it('serves its namespace with auth from the environment and stops on SIGTERM', async () => {
    const p = start({ AUTH_MODE: 'basic' });
    const line = await p.waitForLine(/"msg":"api listening"/);
    const { port, namespace, authMode } = JSON.parse(line);
    expect({ namespace, authMode }).toEqual({ namespace: ns, authMode: 'basic' });
    const url = `http://127.0.0.1:${port}`;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect((await client(url).get(`/v1/namespaces/${ns}/agents`)).status).toBe(401);

    // A key made through the API of an open instance works here (the same namespace's Secrets).
    const open = start({ AUTH_MODE: 'open' });
    const openPort = JSON.parse(await open.waitForLine(/"msg":"api listening"/)).port;
    const key = (await client(`http://127.0.0.1:${openPort}`).post('/v1/api-keys', { name: 'proc' })).body;
    const authed = client(url, { authorization: basic(key.public_key, key.secret_key) });
    const created = await authed.post(`/v1/namespaces/${ns}/agents`, { name: 'a1', spec: { prompt: 'hi' } });
    expect(created.status, created.text).toBe(201);
    expect((await authed.get(`/v1/namespaces/${ns}/agents`)).body.items[0].metadata.name).toBe('a1');
    open.proc.kill('SIGTERM');

    const t0 = performance.now();
    p.proc.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(p.output()).toContain('"msg":"shutting down"');
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    expect(await open.exited).toBe(0);
    // The secret key never reaches the log, even at debug level.
    expect(p.output() + open.output()).not.toContain(key.secret_key);
  });

  it.each([
    [{ BROKER_URL: 'notaurl' }, 'BROKER_URL'],
    [{ NAMESPACE: 'Not_Valid' }, 'NAMESPACE'],
    [{ MARKETPLACE_ALLOWED_HOSTS: 'catalog.svc' }, 'MARKETPLACE_ALLOWED_HOSTS'],
    [{ AUTH_MODE: 'sso', OIDC_ISSUER_URL: '', OIDC_APPLICATION_ID: '' }, 'OIDC_ISSUER_URL'],
  ])('invalid configuration %o exits non-zero naming %s', async (env, name) => {
    const p = spawnBerth(['api', '--port', '0'], { ...process.env, KUBECONFIG: kubeconfigPath, ...env });
    running.push(p);
    const code = await p.exited;
    expect(code).not.toBe(0);
    expect(p.output()).toContain(name);
    expect(p.output()).not.toContain('api listening');
  });
});
