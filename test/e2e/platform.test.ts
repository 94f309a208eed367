import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { createNamespace, kubectl } from '../support/kube.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';

/**
 * The issue-level acceptance path: `berth up` as a real process (reusing the test cluster), then
 * only kubectl and HTTP — Model, Agent and Query applied, the Query reaches `done`, and the broker
 * holds its messages, chunks, events, trace and session; deleting the Query purges them.
 */
let up: Spawned;
let fake: FakeModelServer;
let ns: string;
let broker: string;
const dir = mkdtempSync(join(tmpdir(), 'berth-e2e-'));

beforeAll(async () => {
  [fake, ns] = await Promise.all([startFakeModel(), createNamespace('e2e')]);
  fake.script('e2e-model', {
    reply: 'Paris is the capital of France.',
    usage: { prompt: 11, completion: 7 },
  });
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, fake.ca);
  up = spawnBerth(
    [
      'up',
      '--namespace',
      ns,
      '--api-port',
      '0',
      '--broker-port',
      '0',
      '--dashboard-port',
      '0',
      '--state-dir',
      join(dir, 'state'),
    ],
    {
      ...process.env,
      KUBECONFIG: inject('kubeconfig'),
      // The engine trusts the fake model's CA the documented way.
      NODE_EXTRA_CA_CERTS: caFile,
      LOG_LEVEL: 'info',
    },
  );
  const ready = JSON.parse(await up.waitForLine(/"msg":"ready"/, 60_000));
  broker = ready.broker;
});

afterAll(async () => {
  up?.proc.kill('SIGINT');
  await up?.exited;
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

const manifests = (url: string) => `
apiVersion: v1
kind: Secret
metadata: {name: llm-key, labels: {berth.dev/usage: engine}}
stringData:
  token: sk-test-e2e-0123456789abcdef
---
apiVersion: berth.dev/v1alpha1
kind: Model
metadata: {name: default}
spec: {type: openai, model: e2e-model, baseUrl: "${url}", apiKey: {secretKeyRef: {name: llm-key, key: token}}}
---
apiVersion: berth.dev/v1alpha1
kind: Agent
metadata: {name: geo}
spec:
  prompt: You answer geography questions.
  modelRef: {name: default}
---
apiVersion: berth.dev/v1alpha1
kind: Query
metadata:
  name: capital
  annotations: {berth.dev/streaming-enabled: "true"}
spec:
  input: What is the capital of France?
  target: {type: agent, name: geo}
  sessionId: e2e-session
`;

const getJson = async (path: string) => {
  const res = await fetch(`${broker}${path}`);
  expect(res.status, path).toBe(200);
  return res.json();
};

describe('berth up end to end', () => {
  it('runs a Query applied with kubectl to done and records everything in the broker', {
    timeout: 90_000,
  }, async () => {
    const applied = await kubectl(['apply', '-n', ns, '-f', '-'], manifests(fake.url));
    expect(applied.code, applied.stderr).toBe(0);
    const waited = await kubectl([
      'wait',
      '-n',
      ns,
      '--for=jsonpath={.status.phase}=done',
      'query/capital',
      '--timeout=60s',
    ]);
    expect(waited.code, `${waited.stderr}\n${up.output().slice(-3000)}`).toBe(0);

    const q = JSON.parse((await kubectl(['get', 'query', 'capital', '-n', ns, '-o', 'json'])).stdout);
    expect(q.status).toMatchObject({
      phase: 'done',
      response: { content: 'Paris is the capital of France.' },
      tokenUsage: { promptTokens: 11, completionTokens: 7, totalTokens: 18 },
    });
    expect(q.status.a2a.contextId).toBeTruthy();
    expect(q.metadata.finalizers).toContain('berth.dev/query-cleanup');
    const table = await kubectl(['get', 'queries', '-n', ns]);
    expect(table.stdout).toMatch(/capital\s+agent\s+geo\s+done/);
    expect(fake.requests.at(-1)?.authorization).toBe('Bearer sk-test-e2e-0123456789abcdef');

    const messages = await getJson(`/messages?query_id=capital&limit=100`);
    expect(
      messages.messages.map((m: any) => [m.message?.role ?? m.role, m.message?.content ?? m.content]),
    ).toEqual([
      ['user', 'What is the capital of France?'],
      ['assistant', 'Paris is the capital of France.'],
    ]);

    const stream = await (await fetch(`${broker}/stream/capital?from-beginning=true`)).text();
    expect(stream).toContain('Paris');
    expect(stream.trimEnd().endsWith('data: [DONE]')).toBe(true);

    const events = await getJson('/events/capital?limit=1000');
    const reasons = events.items.map((e: any) => e.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([
        'QueryExecutionStart',
        'LLMCallStart',
        'LLMCallComplete',
        'QueryExecutionComplete',
      ]),
    );

    await expect
      .poll(async () => (await getJson('/traces?session_id=e2e-session')).items.length, { timeout: 10_000 })
      .toBeGreaterThan(0);
    const session = await getJson('/sessions/e2e-session');
    expect(JSON.stringify(session)).toContain('capital');
  });

  it('purges the query data from the broker when the Query is deleted, keeping the session', async () => {
    const deleted = await kubectl(['delete', 'query', 'capital', '-n', ns, '--timeout=30s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await getJson('/messages?query_id=capital')).total).toBe(0);
    expect((await getJson('/events/capital')).items).toEqual([]);
    expect((await fetch(`${broker}/sessions/e2e-session`)).status).toBe(200);
  });
});
