/**
 * `berth up` is a local run: every server it starts (API, broker, dashboard) listens on loopback
 * unless `--host` says otherwise, and listening beyond loopback in `open` mode logs a structured
 * warning. Checked from the outside: each server's own "listening" line names the address it bound,
 * and a connection through a non-loopback address of this machine is refused.
 */
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createNamespace } from '../support/kube.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';

const running: Spawned[] = [];
afterAll(() => {
  for (const p of running) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
});

/** `berth up` on the test cluster, confined to its own namespace so it runs no other file's queries. */
async function up(extra: string[], env: NodeJS.ProcessEnv = {}) {
  const ns = await createNamespace('up-host');
  const p = spawnBerth(
    ['up', '--namespace', ns, '--api-port', '0', '--broker-port', '0', '--dashboard-port', '0', ...extra],
    { ...process.env, KUBECONFIG: inject('kubeconfig'), AUTH_MODE: 'open', ...env },
  );
  running.push(p);
  const ready = JSON.parse(await p.waitForLine(/"msg":"ready"/, 60_000));
  const line = (msg: string) =>
    JSON.parse(
      p
        .output()
        .split('\n')
        .find((l) => l.includes(`"msg":"${msg}"`)) as string,
    );
  const portOf = (url: string) => Number(new URL(url).port);
  return {
    p,
    ports: { api: portOf(ready.api), broker: portOf(ready.broker), dashboard: portOf(ready.dashboard) },
    bound: {
      api: line('api listening').address,
      broker: line('broker listening').host,
      dashboard: line('dashboard listening').address,
    },
  };
}

async function stop(p: Spawned) {
  p.proc.kill('SIGINT');
  expect(await p.exited).toBe(0);
}

/** A non-loopback IPv4 address of this machine, if it has one. */
function outwardAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

/** Resolves with 'connected' or the error code of a TCP connection to host:port. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.setTimeout(3000, () => {
      s.destroy();
      resolve('timeout');
    });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

const WARNING = 'listening beyond loopback with AUTH_MODE=open';

describe('berth up listens on loopback', () => {
  it('binds the API, broker and dashboard to 127.0.0.1 by default, unreachable through other addresses', async () => {
    const { p, ports, bound } = await up([]);
    try {
      expect(bound).toEqual({ api: '127.0.0.1', broker: '127.0.0.1', dashboard: '127.0.0.1' });
      for (const port of Object.values(ports)) expect(await tryConnect('127.0.0.1', port)).toBe('connected');
      const outward = outwardAddress();
      if (outward)
        for (const [name, port] of Object.entries(ports))
          expect(await tryConnect(outward, port), `${name} via ${outward}`).toBe('ECONNREFUSED');
      expect(p.output()).not.toContain(WARNING);
    } finally {
      await stop(p);
    }
  }, 120_000);

  it('listens on every interface with --host 0.0.0.0 and warns, in open mode, that anyone can call it', async () => {
    const { p, ports, bound } = await up(['--host', '0.0.0.0']);
    try {
      expect(bound).toEqual({ api: '0.0.0.0', broker: '0.0.0.0', dashboard: '0.0.0.0' });
      const outward = outwardAddress();
      if (outward) expect(await tryConnect(outward, ports.api)).toBe('connected');
      const warning = JSON.parse(
        p
          .output()
          .split('\n')
          .find((l) => l.includes(WARNING)) as string,
      );
      expect(warning).toMatchObject({
        level: 'warn',
        host: '0.0.0.0',
        authMode: 'open',
        exposed: ['api', 'broker', 'dashboard'],
      });
    } finally {
      await stop(p);
    }
  }, 120_000);
});
