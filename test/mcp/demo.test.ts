/**
 * The issue's acceptance, offline: the samples' MCPServer (pointed at the demo MCP server), the
 * agent `counter` using its `word_count`, and the Query `count-words` answered by the demo model
 * through the real controller (discovery) and engine (the tool call); then the same agent called
 * from MCP clients of both revisions through Berth's `/mcp`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { API_VERSION, DEMO_MODEL, Kinds, type MCPServer, type Query } from '../../pkg/api/index.ts';
import { type RunningDemoMcp, startDemoMcpServer } from '../../pkg/demo-mcp/server.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { ROOT } from '../support/process.ts';
import { connect, type Revision, textOf } from './clients.ts';

let p: Platform;
let demo: RunningDemoMcp;

/** The sample of `kind` named `name` from manifests/samples/<file>, in the test's namespace. */
function sample(file: string, kind: string, name: string): KubernetesObject {
  const docs = parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'samples', file), 'utf8'));
  const obj = docs
    .map((d) => d.toJS() as KubernetesObject)
    .find((o) => o?.kind === kind && o.metadata?.name === name);
  if (!obj) throw new Error(`no ${kind} ${name} in manifests/samples/${file}`);
  return { ...obj, metadata: { ...obj.metadata, namespace: p.ns } };
}

// Generous bounds: the machine these run on is shared with other suites (waits are for conditions).
vi.setConfig({ testTimeout: 120_000 });

beforeAll(async () => {
  [p, demo] = await Promise.all([
    startPlatform('mcp-demo'),
    startDemoMcpServer({ port: 0, logger: createLogger({ level: 'warn' }) }),
  ]);
  await p.apply({
    apiVersion: API_VERSION,
    kind: 'Model',
    metadata: { name: DEMO_MODEL.name, namespace: p.ns },
    spec: DEMO_MODEL.spec,
  } as KubernetesObject);
  // The sample names the address `berth up` serves it at; this test's demo server has its own port.
  const server = sample('mcpserver.yaml', 'MCPServer', 'demo-tools') as MCPServer;
  expect(server.spec.address).toEqual({ value: 'http://127.0.0.1:8090/mcp' });
  await p.apply({ ...server, spec: { ...server.spec, address: { value: demo.url } } } as KubernetesObject);
  await p.apply(sample('agent.yaml', 'Agent', 'counter'));
}, 180_000);

afterAll(async () => {
  await demo?.close();
  await p?.stop();
});

describe('the demo MCP server through an agent', () => {
  it('is discovered: ready, its revision and its three tools', async () => {
    const s = (await p.cache.waitFor(
      Kinds.MCPServer,
      p.ns,
      'demo-tools',
      (o) => (o as MCPServer | undefined)?.status?.phase === 'ready',
      { timeoutMs: 60_000 },
    )) as MCPServer;
    expect(s.status?.protocolVersion).toBe('2026-07-28');
    expect(s.status?.toolCount).toBe(3);
    expect(s.status?.tools?.map((t) => t.name).sort()).toEqual(['echo', 'get_time', 'word_count']);
  });

  it('answers the sample Query count-words with the tool’s result', async () => {
    await p.apply(sample('query.yaml', 'Query', 'count-words'));
    const q = (await p.cache.waitFor(
      Kinds.Query,
      p.ns,
      'count-words',
      (o) => ['done', 'error', 'canceled'].includes((o as Query | undefined)?.status?.phase ?? ''),
      { timeoutMs: 60_000 },
    )) as Query;
    expect(q.status?.phase, q.status?.message).toBe('done');
    expect(q.status?.response?.content).toBe('[demo model] The tool answered: 9 words');
  });

  it.each(['modern', 'legacy-v1'] as Revision[])(
    'is callable from an MCP client (%s) through /mcp',
    async (revision) => {
      const client = await connect(p.api.url, revision);
      try {
        const listed = await client.callTool({ name: 'list_targets', arguments: {} });
        expect(listed.structuredContent?.targets).toContain('agent/counter');
        const res = await client.callTool({
          name: 'invoke_target',
          arguments: { target: 'agent/counter', input: 'Count with word_count: one two three' },
        });
        expect(res.isError).toBeFalsy();
        expect(textOf(res)).toBe('[demo model] The tool answered: 3 words');
      } finally {
        await client.close();
      }
    },
  );
});
