/**
 * API writes per query (issue 17): counted by the API server itself (`apiserver_request_total` for
 * berth.dev queries, by verb) on a control plane of this file's own, so no other test's queries
 * count. `berth up` runs against it (the demo model answers, no network), and a Query created
 * through the API service (REST or /compat/v1) costs at most 2 writes from creation to done, one
 * applied with kubectl at most 3.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNNING_STATUS_DELAY_MS } from '../../pkg/controller/runs/index.ts';
import { type ControlPlane, projectRoot, startControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { rawRequest } from '../../pkg/kube/raw.ts';
import { kubectl } from '../support/kube.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';
import { eventually } from '../support/wait.ts';

const NS = 'default';
const dir = mkdtempSync(join(tmpdir(), 'berth-writes-'));
let cp: ControlPlane;
let up: Spawned;
let api: string;
let admin: KubeConfig;

// Every port free-chosen: the dashboard's default 3000 may be another test's at the same time.
const FREE_PORTS = ['--api-port', '0', '--broker-port', '0', '--dashboard-port', '0'];

beforeAll(async () => {
  cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds'), stateDir: join(dir, 'cp') });
  admin = new KubeConfig();
  admin.loadFromFile(cp.kubeconfigPath);
  up = spawnBerth(['up', '--namespace', NS, '--state-dir', join(dir, 'state'), ...FREE_PORTS], {
    ...process.env,
    KUBECONFIG: cp.kubeconfigPath,
    LOG_LEVEL: 'info',
  });
  api = JSON.parse(await up.waitForLine(/"msg":"ready"/, 90_000)).api;
}, 180_000);

afterAll(async () => {
  up?.proc.kill('SIGINT');
  await up?.exited;
  await cp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes (POST, PUT, PATCH) the API server has served on berth.dev queries so far. */
async function queryWrites(): Promise<number> {
  const res = await rawRequest(admin, { path: '/metrics', accept: 'text/plain' });
  let n = 0;
  for (const line of res.body.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes('resource="queries"')) continue;
    if (/verb="(POST|PUT|PATCH|APPLY)"/.test(line)) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

/**
 * The writes a query may cost: `base`, plus its `running` write when the run itself outlasted
 * RUNNING_STATUS_DELAY_MS (a loaded machine can slow even the demo model past it).
 */
async function allowed(name: string, base: number): Promise<number> {
  const q = (await (await fetch(`${api}/v1/namespaces/${NS}/queries/${name}`)).json()) as {
    status?: { startTime?: string; completionTime?: string };
  };
  const ran = Date.parse(q.status?.completionTime ?? '') - Date.parse(q.status?.startTime ?? '');
  return ran >= RUNNING_STATUS_DELAY_MS ? base + 1 : base;
}

async function phaseOf(name: string): Promise<string | undefined> {
  const res = await fetch(`${api}/v1/namespaces/${NS}/queries/${name}`);
  return res.ok ? ((await res.json()) as { status?: { phase?: string } }).status?.phase : undefined;
}

/** Writes between `before` and the moment the count stops moving after `done`. */
async function writesUntilDone(name: string, before: number): Promise<number> {
  await eventually(async () => (await phaseOf(name)) === 'done', 30_000, 50);
  // The metric is updated when a request completes: wait until our final write shows.
  let last = -1;
  let now = await queryWrites();
  await eventually(
    async () => {
      [last, now] = [now, await queryWrites()];
      return now === last && now > before;
    },
    10_000,
    200,
  );
  return now - before;
}

describe('API writes per query', () => {
  it('REST: created with the finalizer, done in at most 2 writes', { timeout: 60_000 }, async () => {
    const before = await queryWrites();
    const res = await fetch(`${api}/v1/namespaces/${NS}/queries`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'rest-q',
        spec: { input: 'hello', target: { type: 'model', name: 'demo' } },
      }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as { metadata: { finalizers: string[] } }).metadata.finalizers).toContain(
      'berth.dev/query-cleanup',
    );
    const n = await writesUntilDone('rest-q', before);
    expect(n).toBeLessThanOrEqual(await allowed('rest-q', 2));
    // Each write is named for the part of Berth that made it (from its User-Agent), not "unknown".
    const q = await rawRequest(admin, { path: `/apis/berth.dev/v1alpha1/namespaces/${NS}/queries/rest-q` });
    const managers = q
      .json<{ metadata: { managedFields: { manager: string; subresource?: string }[] } }>()
      .metadata.managedFields.map((f) => `${f.manager}${f.subresource ? `/${f.subresource}` : ''}`);
    expect(managers.sort()).toEqual(['berth-api', 'berth-controller/status']);
  });

  it('/compat/v1: a chat completion costs at most 2 query writes', { timeout: 60_000 }, async () => {
    const before = await queryWrites();
    const openai = new OpenAI({ baseURL: `${api}/compat/v1`, apiKey: 'open-mode' });
    const answer = await openai.chat.completions.create({
      model: 'model/demo',
      messages: [{ role: 'user', content: 'count my writes' }],
    });
    expect(answer.choices[0]?.message.content).toContain('count my writes');
    await eventually(async () => (await queryWrites()) - before >= 2, 10_000, 100);
    // Settled: nothing more arrives for this query (its deletion is not part of creation → done).
    const n = (await queryWrites()) - before;
    // The completion's id is its Query's name.
    expect(n).toBeLessThanOrEqual(await allowed(answer.id, 2));
  });

  it('kubectl: created without the finalizer, done in at most 3 writes', { timeout: 60_000 }, async () => {
    const before = await queryWrites();
    const applied = await kubectl(
      ['--kubeconfig', cp.kubeconfigPath, 'create', '-n', NS, '-f', '-'],
      `apiVersion: berth.dev/v1alpha1
kind: Query
metadata: {name: kubectl-q}
spec: {input: hello, target: {type: model, name: demo}}
`,
    );
    expect(applied.code, applied.stderr).toBe(0);
    const n = await writesUntilDone('kubectl-q', before);
    expect(n).toBeLessThanOrEqual(await allowed('kubectl-q', 3));
  });
});
