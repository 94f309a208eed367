import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, kubectl } from '../support/kube.ts';
import { processesMentioning, ROOT, spawnBerth } from '../support/process.ts';

const stateDir = mkdtempSync(join(tmpdir(), 'berth-up-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe('berth up', () => {
  it('starts a fresh control plane, prints how to reach it, and leaves nothing behind on Ctrl-C', async () => {
    const env = { ...process.env };
    delete env.KUBECONFIG;
    const up = spawnBerth(['up', '--state-dir', stateDir, '--api-port', '0', '--broker-port', '0'], env);
    try {
      await up.waitForLine(/"msg":"ready"/, 120_000);
      const kubeconfig = join(stateDir, 'kubeconfig');
      expect(up.output()).toContain(`kubeconfig:      ${kubeconfig}`);
      expect(up.output()).toMatch(/Kubernetes API:\s+https:\/\/127\.0\.0\.1:\d+/);
      expect(existsSync(kubeconfig)).toBe(true);
      expect(processesMentioning(stateDir).length).toBeGreaterThanOrEqual(2);

      const applied = await kubectl([
        '--kubeconfig',
        kubeconfig,
        'apply',
        '-f',
        join(ROOT, 'crds'),
        '-f',
        join(ROOT, 'manifests', 'samples'),
      ]);
      expect(applied.code, applied.stderr).toBe(0);
      const got = await kubectl(['--kubeconfig', kubeconfig, 'get', 'queries']);
      expect(got.stdout).toMatch(/hello\s+agent\s+assistant/);
    } finally {
      up.proc.kill('SIGINT');
    }
    expect(await up.exited).toBe(0);
    expect(processesMentioning(stateDir)).toEqual([]);
  });

  it('reuses the cluster KUBECONFIG points at', async () => {
    // Restricted to its own namespace so its controller never runs other test files' queries.
    const ns = await createNamespace('up-reuse');
    const up = spawnBerth(
      [
        'up',
        '--state-dir',
        join(stateDir, 'unused'),
        '--namespace',
        ns,
        '--api-port',
        '0',
        '--broker-port',
        '0',
      ],
      {
        ...process.env,
        KUBECONFIG: inject('kubeconfig'),
      },
    );
    try {
      const line = await up.waitForLine(/reusing the cluster KUBECONFIG points at/, 30_000);
      expect(line).toContain(inject('kubeServer'));
      await up.waitForLine(/"msg":"ready"/, 30_000);
      expect(existsSync(join(stateDir, 'unused', 'kubeconfig'))).toBe(false);
    } finally {
      up.proc.kill('SIGINT');
    }
    expect(await up.exited).toBe(0);
  });
});

describe('berth CLI', () => {
  for (const sub of ['up', 'controller', 'api', 'broker', 'migrate']) {
    it(`berth ${sub} --help describes the subcommand`, async () => {
      const p = spawnBerth([sub, '--help']);
      expect(await p.exited).toBe(0);
      expect(p.output()).toContain(`Usage: berth ${sub}`);
    });
  }

  it('rejects an invalid port with a message naming the option', async () => {
    const p = spawnBerth(['broker', '--port', 'eighty']);
    expect(await p.exited).not.toBe(0);
    expect(p.output()).toContain('--port must be an integer');
  });

  for (const sub of ['up', 'controller', 'api']) {
    it(`berth ${sub} rejects an invalid --namespace with a message naming the option`, async () => {
      const p = spawnBerth([sub, '--namespace', 'Bad_NS']);
      expect(await p.exited).not.toBe(0);
      expect(p.output()).toContain('--namespace must be a namespace name');
      expect(p.output()).toContain('"Bad_NS"');
    });
  }
});
