import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, kubectl } from '../support/kube.ts';
import { processesMentioning, ROOT, spawnBerth } from '../support/process.ts';
import { eventually } from '../support/wait.ts';

const stateDir = mkdtempSync(join(tmpdir(), 'berth-up-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

const FREE_PORTS = ['--api-port', '0', '--broker-port', '0', '--dashboard-port', '0', '--demo-mcp-port', '0'];

/** `berth up` starting a control plane of its own in `dir` (KUBECONFIG unset). */
function upWithOwnControlPlane(dir: string) {
  const env = { ...process.env };
  delete env.KUBECONFIG;
  return spawnBerth(['up', '--state-dir', dir, ...FREE_PORTS], env);
}

describe('berth up', () => {
  it('starts a fresh control plane, prints how to reach it, and leaves nothing behind on Ctrl-C', async () => {
    const up = upWithOwnControlPlane(stateDir);
    try {
      await up.waitForLine(/"msg":"ready"/, 120_000);
      const kubeconfig = join(stateDir, 'kubeconfig');
      expect(up.output()).toContain(`kubeconfig:      ${kubeconfig}`);
      expect(up.output()).toMatch(/Kubernetes API:\s+https:\/\/127\.0\.0\.1:\d+/);
      expect(existsSync(kubeconfig)).toBe(true);
      expect(processesMentioning(stateDir).length).toBeGreaterThanOrEqual(2);

      // The README's try-it line: CRDs and Model "demo" come from `berth up`, so no warning.
      const applied = await kubectl([
        '--kubeconfig',
        kubeconfig,
        'apply',
        '-f',
        join(ROOT, 'manifests', 'samples'),
      ]);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stderr).toBe('');
      const phase = async (q: string) =>
        (await kubectl(['--kubeconfig', kubeconfig, 'get', 'query', q, '-o', 'jsonpath={.status.phase}']))
          .stdout;
      // A query that ended otherwise fails at once, naming its phase and message; on a loaded machine
      // (CI beside other suites) the three may take a while, so the bound is generous.
      let phases: string[] = [];
      await eventually(
        async () => {
          phases = await Promise.all(['hello', 'weather', 'team-hello'].map(phase));
          const ended = phases.findIndex((p) => p === 'error' || p === 'canceled');
          if (ended >= 0) {
            const q = ['hello', 'weather', 'team-hello'][ended] as string;
            const status = await kubectl([
              '--kubeconfig',
              kubeconfig,
              'get',
              'query',
              q,
              '-o',
              'jsonpath={.status}',
            ]);
            throw new Error(`query ${q} ended ${phases[ended]}: ${status.stdout}`);
          }
          return phases.every((p) => p === 'done');
        },
        180_000,
        200,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; phases of hello, weather, team-hello: ${JSON.stringify(phases)}`);
      });
      const got = await kubectl(['--kubeconfig', kubeconfig, 'get', 'queries']);
      expect(got.stdout).toMatch(/hello\s+agent\s+assistant\s+done/);
      const weather = await kubectl(['--kubeconfig', kubeconfig, 'get', 'query', 'weather', '-o', 'json']);
      // The demo model called the demo tool the question names, then answered with its result.
      expect(JSON.stringify(JSON.parse(weather.stdout).status)).toContain('demo result of weather');
      // The sample evaluations pass on a first run: the built-in evaluator of `berth up` answers
      // at the sample Evaluator's address (rules, and the demo Model as judge).
      const evaluations = ['capital-check', 'hello-check', 'hello-judge'];
      const verdict = async (e: string) =>
        (
          await kubectl([
            '--kubeconfig',
            kubeconfig,
            'get',
            'evaluation',
            e,
            '-o',
            'jsonpath={.status.phase}/{.status.passed}/{.status.message}',
          ])
        ).stdout;
      let verdicts: string[] = [];
      await eventually(
        async () => {
          verdicts = await Promise.all(evaluations.map(verdict));
          if (verdicts.some((v) => v.startsWith('error') || v.startsWith('canceled')))
            throw new Error(`an evaluation failed: ${JSON.stringify(verdicts)}`);
          return verdicts.every((v) => v.startsWith('done/true'));
        },
        60_000,
        200,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; ${JSON.stringify(verdicts)}`);
      });
      const evaluator = await kubectl(['--kubeconfig', kubeconfig, 'get', 'evaluator', 'reference']);
      expect(evaluator.stdout).toMatch(/reference\s+http:\/\/127\.0\.0\.1:9100\s+ready/);

      const ready = JSON.parse(
        up
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"ready"')) as string,
      );
      const api = ready.api;
      // The dashboard runs too (open mode by default), its proxy reaching this API.
      expect(up.output()).toMatch(/dashboard:\s+http:\/\/127\.0\.0\.1:\d+\/ {2}\(AUTH_MODE open\)/);
      expect((await fetch(`${ready.dashboard}/`)).status).toBe(200);
      expect((await fetch(`${ready.dashboard}/api/v1/namespaces/default/queries`)).status).toBe(200);
      // The demo MCP server runs on loopback, and the API serves /mcp.
      expect(ready.demoMcp).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(up.output()).toContain(`demo MCP server: ${ready.demoMcp}`);
      for (const [base, tool] of [
        [ready.demoMcp, 'word_count'],
        [`${api}/mcp`, 'invoke_target'],
      ]) {
        const listed = await fetch(base, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/list',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/list',
            params: {
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientInfo': { name: 'berth-up-test', version: '1' },
                'io.modelcontextprotocol/clientCapabilities': {},
              },
            },
          }),
        });
        expect(listed.status, base).toBe(200);
        expect(await listed.text()).toContain(`"${tool}"`);
      }
      // The sample MCPServer names the demo server at its default port; this run's has its own.
      // Pointed there, the sample query count-words runs again: the agent calls word_count.
      const kube = (...args: string[]) => kubectl(['--kubeconfig', kubeconfig, ...args]);
      const address = JSON.stringify({ spec: { address: { value: ready.demoMcp } } });
      expect((await kube('patch', 'mcpserver', 'demo-tools', '--type', 'merge', '-p', address)).code).toBe(0);
      expect((await kube('delete', 'query', 'count-words')).code).toBe(0);
      const again = await kube('apply', '-f', join(ROOT, 'manifests', 'samples', 'query.yaml'));
      expect(again.code, again.stderr).toBe(0);
      let counted: { phase?: string; message?: string; response?: { content?: string } } = {};
      await eventually(
        async () => {
          const got = await kube('get', 'query', 'count-words', '-o', 'jsonpath={.status}');
          counted = got.stdout ? JSON.parse(got.stdout) : {};
          return ['done', 'error', 'canceled'].includes(counted.phase ?? '');
        },
        60_000,
        200,
      );
      expect(counted.phase, counted.message).toBe('done');
      expect(counted.response?.content).toBe('[demo model] The tool answered: 9 words');
      const openai = new OpenAI({ baseURL: `${api}/compat/v1`, apiKey: 'unused-in-open-mode' });
      const answer = await openai.chat.completions.create({
        model: 'model/demo',
        messages: [{ role: 'user', content: 'Hello there' }],
      });
      expect(answer.choices[0]?.message.content).toContain('[demo model] You said: Hello there');
      expect(answer.usage?.total_tokens).toBeGreaterThan(0);
      const stream = await openai.chat.completions.create({
        model: 'agent/assistant',
        messages: [{ role: 'user', content: 'Stream please' }],
        stream: true,
      });
      let streamed = '';
      for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? '';
      expect(streamed).toContain('[demo model] You said: Stream please');
    } finally {
      up.proc.kill('SIGINT');
    }
    expect(await up.exited).toBe(0);
    expect(processesMentioning(stateDir)).toEqual([]);
    // Its own waits allow 120 s for the start and 60 s for the samples: a loaded CI machine (a
    // fresh etcd and kube-apiserver beside the rest of the suite) once took over the default 60 s.
  }, 360_000);

  it('reuses the cluster KUBECONFIG points at', async () => {
    // Restricted to its own namespace so its controller never runs other test files' queries.
    const ns = await createNamespace('up-reuse');
    const up = spawnBerth(
      ['up', '--state-dir', join(stateDir, 'unused'), '--namespace', ns, '--no-evaluator', ...FREE_PORTS],
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

  // A Ctrl-C during the start-up (the first run builds the control plane for minutes) stops what
  // is up so far and exits 0 instead of dying on the signal or waiting for the start-up to end.
  const interrupted = async (when: RegExp) => {
    const dir = mkdtempSync(join(stateDir, 'interrupted-'));
    const up = upWithOwnControlPlane(dir);
    try {
      await up.waitForLine(when, 120_000);
    } finally {
      up.proc.kill('SIGINT');
    }
    expect(await up.exited).toBe(0);
    expect(up.output()).toContain('"msg":"shutting down"');
    return { dir, up };
  };

  it('stops on a Ctrl-C while its control plane starts', async () => {
    const { dir } = await interrupted(/starting local control plane/);
    // Nothing of its own was up to stop: etcd and kube-apiserver end with their guards (1 s polls).
    await eventually(() => processesMentioning(dir).length === 0, 10_000, 100);
  }, 150_000);

  it('stops what it started on a Ctrl-C after its control plane is up', async () => {
    const { dir, up } = await interrupted(/"msg":"control plane up"/);
    expect(up.output()).toContain('"msg":"stopped"');
    expect(processesMentioning(dir)).toEqual([]);
  }, 150_000);
});

describe('berth CLI', () => {
  for (const sub of ['up', 'controller', 'api', 'broker', 'dashboard', 'migrate']) {
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
