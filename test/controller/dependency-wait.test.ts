/**
 * A Query whose Memory or MCPServer is not resolved yet, on the real control plane with the real
 * engine (the demo model), a real broker as the Memory and a real MCP server: it waits pending with
 * `Completed=False` MemoryNotReady / MCPServerNotReady and runs once the object resolves; it ends
 * Timeout if spec.timeout passes first; a Memory that does not exist still fails it at once. A
 * target Agent created just after its Query is looked for again, not failed as missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type Query } from '../../pkg/api/index.ts';
import { type RunningController, startController } from '../../pkg/controller/index.ts';
import { type BerthQueryEngine, createQueryEngine } from '../../pkg/engine/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { getJson, startTestBroker, type TestBroker } from '../engine/broker.ts';
import { type ModernMcpServer, startModernMcpServer } from '../fixtures/mcp/modern-server.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';
import { liveClient } from './support.ts';

let ns: string;
let ctl: RunningController;
let broker: TestBroker;
let mcp: ModernMcpServer;
let engine: BerthQueryEngine | undefined;
const admin = liveClient(kubeConfig());

const apply = async (yaml: string) => {
  const r = await kubectl(['apply', '-n', ns, '-f', '-'], yaml);
  expect(r.code, r.stderr).toBe(0);
};
const waitQuery = (name: string, pred: (q: Query | undefined) => boolean, timeoutMs = 30_000) =>
  ctl.caches.waitFor(Kinds.Query, ns, name, (o) => pred(o as Query | undefined), {
    timeoutMs,
  }) as Promise<Query>;
const ended = (q: Query | undefined) => ['done', 'error', 'canceled'].includes(q?.status?.phase ?? '');
const waitingWith = (reason: string) => (q: Query | undefined) =>
  q?.status?.conditions?.some((c) => c.type === 'Completed' && c.status === 'False' && c.reason === reason) ??
  false;
const completed = (q: Query) => q.status?.conditions?.find((c) => c.type === 'Completed');

const memory = (name: string, address: string) => `
apiVersion: berth.dev/v1alpha1
kind: Memory
metadata: {name: ${name}}
spec: {address: {value: "${address}"}}
---`;
/** A Memory on a Service that does not exist (yet): in phase error, ServiceNotFound, no address. */
const memoryOnMissingService = (name: string) => `
apiVersion: berth.dev/v1alpha1
kind: Memory
metadata: {name: ${name}}
spec: {address: {valueFrom: {serviceRef: {name: ${name}-not-yet, port: 80}}}}
---`;
const query = (name: string, spec: string, input = `hello ${name}`) => `
apiVersion: berth.dev/v1alpha1
kind: Query
metadata: {name: ${name}}
spec: {input: ${JSON.stringify(input)}, ${spec}}
---`;

beforeAll(async () => {
  [ns, broker, mcp] = await Promise.all([
    createNamespace('ctl-depwait'),
    startTestBroker(),
    startModernMcpServer(),
  ]);
  ctl = await startController({
    kc: kubeConfig('controller'),
    namespace: ns,
    engine: (lookup, brokers) => {
      engine = createQueryEngine({ lookup, brokers, logger: createLogger({ level: 'silent' }) });
      return engine;
    },
    brokerUrl: broker.url,
    leaderElection: false,
    probes: false,
    metrics: false,
    logger: createLogger({ level: 'silent' }),
  });
  await apply(`
apiVersion: berth.dev/v1alpha1
kind: Model
metadata: {name: demo}
spec: {type: demo, model: berth-demo}
`);
});

afterAll(async () => {
  await ctl?.stop();
  await engine?.close();
  await Promise.all([broker?.stop(), mcp?.close()]);
});

describe('a Query waiting for an object to be resolved', () => {
  it('a Query whose Memory is created just after it (applied together) runs with that Memory', async () => {
    // The Memory is created only once the controller's cache holds the Query: it is reconciled
    // before its Memory exists anywhere (what kubectl does with the Query first in the file).
    await apply(query('together-q', 'target: {type: model, name: demo}, memory: {name: together}'));
    await waitQuery('together-q', (q) => q !== undefined);
    await apply(memory('together', broker.url));
    const q = await waitQuery('together-q', ended);
    expect(q.status?.phase, q.status?.message).toBe('done');
    expect(q.status?.response?.content).toContain('hello together-q');
    // The conversation went through the Memory: the broker holds the exchange.
    const id = encodeURIComponent(q.status?.conversationId ?? '');
    const { messages } = await getJson<{ messages: unknown[] }>(
      `${broker.url}/messages?conversation_id=${id}`,
    );
    expect(messages).toHaveLength(2); // the user's input and the answer
  });

  it('a Query whose target Agent is created just after it (applied together) runs, not TargetNotFound', async () => {
    await apply(query('agent-later-q', 'target: {type: agent, name: later-agent}'));
    await waitQuery('agent-later-q', (q) => q !== undefined);
    await apply(`
apiVersion: berth.dev/v1alpha1
kind: Agent
metadata: {name: later-agent}
spec: {modelRef: {name: demo}, prompt: "You help."}
---`);
    const q = await waitQuery('agent-later-q', ended);
    expect(q.status?.phase, q.status?.message).toBe('done');
    expect(completed(q)?.reason).toBe('Succeeded');
  });

  it('a target that never comes fails the Query (TargetNotFound) once the few seconds of grace are over', async () => {
    const started = Date.now();
    await apply(query('ghost-q', 'target: {type: agent, name: ghost}'));
    const q = await waitQuery('ghost-q', ended);
    expect(q.status?.phase).toBe('error');
    expect(completed(q)?.reason).toBe('TargetNotFound');
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('waits pending (MemoryNotReady) while its Memory has no address, then runs once it resolves', async () => {
    // The Memory exists, in phase error (its Service is not there yet), without an address.
    await apply(
      `${memoryOnMissingService('late')}${query('late-q', 'target: {type: model, name: demo}, memory: {name: late}, timeout: 60s')}`,
    );
    // The reason is there at once; why the Memory is unresolved joins the message once the Memory's
    // own reconcile has said so (the Query may be looked at first: it is re-checked on that change).
    const why = /^waiting for Memory late to be resolved: .*late-not-yet.* not found/;
    const waiting = await waitQuery(
      'late-q',
      (q) => waitingWith('MemoryNotReady')(q) && why.test(completed(q as Query)?.message ?? ''),
    ).catch(async (err: Error) => {
      const q = ctl.caches.get(Kinds.Query, ns, 'late-q') as Query | undefined;
      throw new Error(`${err.message}; the Query's condition: ${JSON.stringify(q && completed(q))}`);
    });
    expect(waiting.status?.phase).toBe('pending');
    await admin.patch(
      Kinds.Memory,
      { namespace: ns, name: 'late' },
      { type: 'merge', patch: { spec: { address: { value: broker.url, valueFrom: null } } } },
    );
    const q = await waitQuery('late-q', ended);
    expect(q.status?.phase, q.status?.message).toBe('done');
    expect(completed(q)?.reason).toBe('Succeeded');
    expect(q.status?.conversationId).toBeTruthy();
  });

  it('ends error/Timeout when spec.timeout passes while it waits', async () => {
    await apply(
      `${memoryOnMissingService('never')}${query('never-q', 'target: {type: model, name: demo}, memory: {name: never}, timeout: 2s')}`,
    );
    await waitQuery('never-q', waitingWith('MemoryNotReady'));
    const q = await waitQuery('never-q', ended);
    expect(q.status?.phase).toBe('error');
    expect(completed(q)?.reason).toBe('Timeout');
    expect(q.status?.message).toMatch(/^query timed out after 2s \(spec\.timeout\) waiting for Memory never/);
  });

  it('a Memory refused as written (an address that is not allowed) fails the Query at once, not held', async () => {
    await apply(
      `${memory('refused', 'ftp://nowhere')}${query('refused-q', 'target: {type: model, name: demo}, memory: {name: refused}')}`,
    );
    const q = await waitQuery('refused-q', ended);
    expect(q.status?.phase).toBe('error');
    expect(completed(q)?.reason).toBe('MemoryError');
    expect(q.status?.message).toContain('ftp');
  });

  it('a Memory that does not exist fails the Query (MemoryError) once the few seconds of grace are over', async () => {
    await apply(query('missing-q', 'target: {type: model, name: demo}, memory: {name: missing}'));
    const q = await waitQuery('missing-q', ended);
    expect(q.status?.phase).toBe('error');
    expect(completed(q)?.reason).toBe('MemoryError');
    expect(q.status?.message).toContain(`Memory missing not found in namespace ${ns}`);
  });

  it('an mcp Tool target waits (MCPServerNotReady) for its MCPServer, then runs', async () => {
    // A Service that does not exist: the MCPServer has no address until it points elsewhere.
    await apply(`
apiVersion: berth.dev/v1alpha1
kind: MCPServer
metadata: {name: later}
spec: {address: {valueFrom: {serviceRef: {name: no-such-service, port: 80}}}}
---
apiVersion: berth.dev/v1alpha1
kind: Tool
metadata: {name: echo}
spec: {type: mcp, mcp: {serverRef: {name: later}, toolName: echo}}
---
${query('echo-q', 'target: {type: tool, name: echo}, timeout: 60s', '{"text": "hi"}')}`);
    const waiting = await waitQuery('echo-q', waitingWith('MCPServerNotReady'));
    expect(waiting.status?.phase).toBe('pending');
    expect(completed(waiting)?.message).toMatch(/^waiting for MCPServer later to be resolved/);
    await admin.patch(
      Kinds.MCPServer,
      { namespace: ns, name: 'later' },
      { type: 'merge', patch: { spec: { address: { value: mcp.url, valueFrom: null } } } },
    );
    const q = await waitQuery('echo-q', ended);
    expect(q.status?.phase, q.status?.message).toBe('done');
    expect(q.status?.response?.content).toBe('echo(2026-07-28): hi');
  });
});
