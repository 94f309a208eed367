/**
 * MCPServers on the real control plane: the controller (discovery, status, conditions) and the real
 * query engine calling MCP tools, against real MCP servers of both revisions built with the official
 * SDKs (2026-07-28: @modelcontextprotocol/server 2.x; 2025-11-25: @modelcontextprotocol/sdk 1.x),
 * hostile endpoints, the fake model and a real broker for events and spans. Applied with kubectl.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type MCPServer, type Query } from '../../pkg/api/index.ts';
import { type RunningController, startController } from '../../pkg/controller/index.ts';
import { createQueryEngine } from '../../pkg/engine/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { getJson, startTestBroker, type TestBroker } from '../engine/broker.ts';
import { type FakeModelServer, startFakeModel } from '../fixtures/fake-model.ts';
import { type HostileMcpServer, startHostileMcpServer } from '../fixtures/mcp/hostile-server.ts';
import { type LegacyMcpServer, startLegacyMcpServer } from '../fixtures/mcp/legacy-server.ts';
import { type ModernMcpServer, startModernMcpServer } from '../fixtures/mcp/modern-server.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';

let ns: string;
let ctl: RunningController;
let fake: FakeModelServer;
let broker: TestBroker;
let modern: ModernMcpServer;
let legacy: LegacyMcpServer;
let hostile: HostileMcpServer;
let engine: ReturnType<typeof createQueryEngine> | undefined;

const SECRET = 'mcp-token-never-shown';

const apply = async (yaml: string) => {
  const r = await kubectl(['apply', '-n', ns, '-f', '-'], yaml);
  expect(r.code, r.stderr).toBe(0);
};
const waitServer = (name: string, pred: (s: MCPServer | undefined) => boolean, timeoutMs = 20_000) =>
  ctl.caches.waitFor(Kinds.MCPServer, ns, name, (o) => pred(o as MCPServer | undefined), {
    timeoutMs,
  }) as Promise<MCPServer>;
const waitQuery = (name: string, pred: (q: Query | undefined) => boolean, timeoutMs = 30_000) =>
  ctl.caches.waitFor(Kinds.Query, ns, name, (o) => pred(o as Query | undefined), {
    timeoutMs,
  }) as Promise<Query>;
const ended = (q: Query | undefined) => ['done', 'error', 'canceled'].includes(q?.status?.phase ?? '');
const cond = (s: MCPServer, type: string) => s.status?.conditions?.find((c) => c.type === type);
async function until(what: string, ok: () => boolean, ms = 15_000) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const server = (name: string, url: string, extra = '') => `
apiVersion: berth.dev/v1alpha1
kind: MCPServer
metadata: {name: ${name}}
spec:
  address: {value: "${url}"}
${extra}
---`;
const model = (name: string) => `
apiVersion: berth.dev/v1alpha1
kind: Model
metadata: {name: ${name}}
spec: {type: openai, model: ${name}, baseUrl: "${fake.url}"}
---`;
const query = (name: string, target: string, input: string) => `
apiVersion: berth.dev/v1alpha1
kind: Query
metadata: {name: ${name}}
spec: {input: ${JSON.stringify(input)}, target: {type: ${target.split('/')[0]}, name: ${target.split('/')[1]}}}
`;
/** The fake model asks for `tool` with `args`, then answers `final: <what the tool said>`. */
const toolThenAnswer = (tool: string, args: unknown) => ({
  toolCall: { name: tool, arguments: JSON.stringify(args) },
  reply: (req: { messages: Array<{ role: string; content?: string | null }> }) =>
    `final: ${req.messages.find((m) => m.role === 'tool')?.content}`,
});

beforeAll(async () => {
  [ns, fake, broker, modern, legacy, hostile] = await Promise.all([
    createNamespace('ctl-mcp'),
    startFakeModel(),
    startTestBroker(),
    startModernMcpServer(),
    startLegacyMcpServer(),
    startHostileMcpServer(),
  ]);
  fake.script('agent-modern', toolThenAnswer('shout', { text: 'hi' }));
  fake.script('agent-legacy', toolThenAnswer('add', { a: 2, b: 3 }));
  fake.script('agent-vanish', toolThenAnswer('slow', { ms: 20_000 }));
  ctl = await startController({
    kc: kubeConfig('controller'),
    namespace: ns,
    engine: (lookup, brokers) => {
      engine = createQueryEngine({
        lookup,
        brokers,
        ca: fake.ca,
        maxRetries: 0,
        logger: createLogger({ level: 'silent' }),
      });
      return engine;
    },
    brokerUrl: broker.url,
    leaderElection: false,
    probes: false,
    metrics: false,
    mcpServers: { retryBaseMs: 20 },
    logger: createLogger({ level: 'silent' }),
  });
  await apply(`${server('modern', modern.url)}${server('legacy', legacy.url, '  timeout: 2s')}
apiVersion: v1
kind: Secret
metadata: {name: mcp-token}
stringData: {token: "Bearer ${SECRET}"}
---
${model('agent-modern')}${model('agent-legacy')}${model('agent-vanish')}
apiVersion: berth.dev/v1alpha1
kind: Agent
metadata: {name: modern-agent}
spec:
  prompt: You use tools.
  modelRef: {name: agent-modern}
  tools: [{mcpServerRef: {name: modern}, toolNames: [echo], rename: {echo: shout}}]
---
apiVersion: berth.dev/v1alpha1
kind: Agent
metadata: {name: legacy-agent}
spec:
  prompt: You use tools.
  modelRef: {name: agent-legacy}
  tools: [{mcpServerRef: {name: legacy}}]
---
apiVersion: berth.dev/v1alpha1
kind: Tool
metadata: {name: adder}
spec: {type: mcp, mcp: {serverRef: {name: legacy}, toolName: add}}
---
apiVersion: berth.dev/v1alpha1
kind: Tool
metadata: {name: sleeper}
spec: {type: mcp, mcp: {serverRef: {name: legacy}, toolName: slow}}
---
apiVersion: berth.dev/v1alpha1
kind: Tool
metadata: {name: patient}
spec: {type: mcp, mcp: {serverRef: {name: modern}, toolName: slow}}
`);
});

afterAll(async () => {
  await ctl?.stop();
  await engine?.close();
  await Promise.all([fake?.close(), broker?.stop(), modern?.close(), legacy?.close(), hostile?.close()]);
});

describe('discovery', () => {
  it('lists the tools of a server of each revision into status; kubectl shows phase, protocol, tools', async () => {
    for (const [name, revision] of [
      ['modern', '2026-07-28'],
      ['legacy', '2025-11-25'],
    ] as const) {
      const s = await waitServer(name, (o) => o?.status?.phase === 'ready');
      expect(s.status).toMatchObject({ protocolVersion: revision, toolCount: 6 });
      expect(s.status?.tools?.[0]).toMatchObject({
        name: 'echo',
        description: `Echoes the text back (MCP ${revision})`,
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        annotations: { readOnlyHint: true, idempotentHint: true },
      });
      expect(cond(s, 'Available')).toMatchObject({ status: 'True', reason: 'ToolsListed' });
      expect(cond(s, 'Discovering')).toMatchObject({ status: 'False', reason: 'DiscoverySucceeded' });
    }
    const table = await kubectl(['get', 'mcpservers', '-n', ns]);
    expect(table.stdout).toMatch(/NAME\s+PHASE\s+PROTOCOL\s+TOOLS\s+AGE/);
    expect(table.stdout).toMatch(/modern\s+ready\s+2026-07-28\s+6\s/);
    expect(table.stdout).toMatch(/legacy\s+ready\s+2025-11-25\s+6\s/);
  });

  it('uses header Secrets only once they opt in, and never shows their value', async () => {
    await apply(
      server(
        'guarded',
        modern.url,
        '  headers: [{name: Authorization, valueFrom: {secretKeyRef: {name: mcp-token, key: token}}}]',
      ),
    );
    const refused = await waitServer('guarded', (o) => o?.status?.phase === 'error');
    expect(cond(refused, 'Available')).toMatchObject({ status: 'False', reason: 'SecretNotUsable' });
    expect(refused.status?.message).toMatch(/add label berth\.dev\/usage=engine/);
    const calls = modern.rec.calls.length;
    await kubectl(['label', 'secret', 'mcp-token', '-n', ns, 'berth.dev/usage=engine']);
    const ready = await waitServer('guarded', (o) => o?.status?.phase === 'ready');
    expect(ready.status?.toolCount).toBe(6);
    expect(modern.rec.calls.length).toBe(calls); // discovery calls no tool
    const yaml = await kubectl(['get', 'mcpserver', 'guarded', '-n', ns, '-o', 'yaml']);
    expect(yaml.stdout).not.toContain(SECRET);
  });

  it('resolves a serviceRef like a Memory (an ExternalName Service here)', async () => {
    const port = new URL(modern.url).port;
    await apply(`
apiVersion: v1
kind: Service
metadata: {name: tools-svc}
spec: {type: ExternalName, externalName: 127.0.0.1, ports: [{port: ${port}}]}
---
apiVersion: berth.dev/v1alpha1
kind: MCPServer
metadata: {name: via-service}
spec:
  address: {valueFrom: {serviceRef: {name: tools-svc, port: ${port}, path: /mcp}}}
`);
    const s = await waitServer('via-service', (o) => o?.status?.phase === 'ready');
    expect(s.status?.lastResolvedAddress).toBe(`http://127.0.0.1:${port}/mcp`);
  });

  it('hostile servers end in error with the reason; a slow one holds no other server', async () => {
    await apply(
      `${server('silent', hostile.url('/slow'), '  timeout: 4s\n  maxRetries: 0')}${server('looping', hostile.url('/pages'))}${server('garbage', hostile.url('/garbage'))}`,
    );
    // While `silent` is still being listed, a new server is listed at once.
    await waitServer('silent', (o) => cond(o as MCPServer, 'Discovering')?.status === 'True', 10_000);
    const started = Date.now();
    await apply(server('quick', modern.url));
    await waitServer('quick', (o) => o?.status?.phase === 'ready');
    expect(Date.now() - started).toBeLessThan(4000);
    const silent = await waitServer('silent', (o) => o?.status?.phase === 'error');
    expect(cond(silent, 'Available')).toMatchObject({ status: 'False', reason: 'Timeout' });
    expect(silent.status?.message).toBe(`MCPServer ${ns}/silent: discovery: no answer within 4s`);
    const looping = await waitServer('looping', (o) => o?.status?.phase === 'error');
    expect(cond(looping, 'Available')?.reason).toBe('TooManyPages');
    const garbage = await waitServer('garbage', (o) => o?.status?.phase === 'error');
    expect(cond(garbage, 'Available')?.reason).toBe('InvalidAnswer');
    expect(cond(garbage, 'Discovering')).toMatchObject({ status: 'False', reason: 'DiscoveryFailed' });
  });
});

describe('queries calling MCP tools', () => {
  it('an agent calls a renamed tool of a 2026-07-28 server, with the trace context, as a span and events', async () => {
    await apply(query('ask-modern', 'agent/modern-agent', 'say hi'));
    const q = await waitQuery('ask-modern', ended);
    expect(q.status?.phase, q.status?.message).toBe('done');
    expect(q.status?.response?.content).toBe('final: echo(2026-07-28): hi');
    expect(fake.requests.find((r) => r.model === 'agent-modern')?.tools?.map((t) => t.function.name)).toEqual(
      ['shout'],
    );
    const seen = modern.rec.calls.filter((c) => c.tool === 'echo').at(-1);
    expect(seen?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    await engine?.flush();
    const events = await getJson<{ items: Array<{ reason: string; data: Record<string, string> }> }>(
      `${broker.url}/events/ask-modern?limit=100`,
    );
    const done = events.items.find((e) => e.reason === 'ToolCallComplete');
    expect(done?.data).toMatchObject({
      tool: 'shout',
      mcpServer: 'modern',
      mcpTool: 'echo',
      protocolVersion: '2026-07-28',
    });
    const traceId = seen?.traceparent?.split('-')[1];
    const trace = await getJson<{ spans: Array<{ name: string; spanId: string }> }>(
      `${broker.url}/traces/${traceId}`,
    );
    const toolSpan = trace.spans.find((s) => s.name === 'tool.call');
    expect(seen?.traceparent?.split('-')[2]).toBe(toolSpan?.spanId);
  });

  it('an agent calls a tool of a 2025-11-25 server (all its tools offered)', async () => {
    await apply(query('ask-legacy', 'agent/legacy-agent', 'add them'));
    const q = await waitQuery('ask-legacy', ended);
    expect(q.status?.phase, q.status?.message).toBe('done');
    expect(q.status?.response?.content).toBe('final: 5');
    const offered = fake.requests.find((r) => r.model === 'agent-legacy')?.tools?.map((t) => t.function.name);
    expect(offered).toEqual(['echo', 'add', 'whoami', 'slow', 'fail', 'big']);
  });

  it('a Tool of type mcp is a query target; a declined call (503) is retried', async () => {
    legacy.unavailableNext(1);
    await apply(query('adder-q', 'tool/adder', '{"a": 40, "b": 2}'));
    const q = await waitQuery('adder-q', ended);
    expect(q.status?.phase, q.status?.message).toBe('done');
    expect(q.status?.response?.content).toBe('42');
  });

  it("ends a call at the server's timeout (2s) as a ToolError", async () => {
    await apply(query('sleepy', 'tool/sleeper', '{"ms": 20000}'));
    const q = await waitQuery('sleepy', ended);
    expect(q.status?.phase).toBe('error');
    expect(q.status?.message).toContain(`MCPServer ${ns}/legacy: tools/call slow: no answer within 2s`);
    expect(q.status?.conditions?.find((c) => c.type === 'Completed')?.reason).toBe('ToolError');
  });

  it('cancelling the Query cancels the MCP call on the server', async () => {
    const before = modern.rec.cancelled;
    await apply(query('cancel-me', 'tool/patient', '{"ms": 20000}'));
    await until('the call to run', () => modern.rec.running > 0);
    await kubectl([
      'patch',
      'query',
      'cancel-me',
      '-n',
      ns,
      '--type',
      'merge',
      '-p',
      '{"spec":{"cancel":true}}',
    ]);
    const q = await waitQuery('cancel-me', ended);
    expect(q.status?.phase).toBe('canceled');
    await until(
      'the server to see the cancellation',
      () => modern.rec.cancelled > before && modern.rec.running === 0,
    );
  });

  it('a server that disappears mid-call: the model gets the error and the query goes on', async () => {
    const doomed = await startModernMcpServer();
    await apply(`${server('doomed', doomed.url)}
apiVersion: berth.dev/v1alpha1
kind: Agent
metadata: {name: doomed-agent}
spec:
  prompt: You use tools.
  modelRef: {name: agent-vanish}
  tools: [{mcpServerRef: {name: doomed}, toolNames: [slow]}]
---
${query('vanish', 'agent/doomed-agent', 'wait for it')}`);
    await until('the call to run', () => doomed.rec.running > 0, 30_000);
    await doomed.close();
    const q = await waitQuery('vanish', ended);
    expect(q.status?.phase, q.status?.message).toBe('done');
    expect(q.status?.response?.content).toMatch(
      new RegExp(`^final: error: MCPServer ${ns}/doomed: tools/call slow: .+`),
    );
  });
});
