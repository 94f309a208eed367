/**
 * Berth as an MCP server (issue 29 item 3): the official clients of both revisions against `/mcp`
 * of a real API service on the test control plane, with the real controller, engine and broker
 * answering Queries through a fake model over HTTPS. list_targets lists what /compat/v1/models
 * lists; invoke_target runs a Query and answers its text, streams progress, honours cancellation.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { berthScheme, Kinds, type Query } from '../../pkg/api/index.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { kubeConfig } from '../support/kube.ts';
import { connect, LEGACY, MODERN, type Revision, textOf } from './clients.ts';

let p: Platform;
const WORDS = 'one two three four five six';

beforeAll(async () => {
  p = await startPlatform('mcp-server');
  p.fake.script('stream-model', { reply: WORDS, chunkDelayMs: 40 });
  p.fake.script('slow-model', { delayMs: 20_000, reply: 'too late' });
});
afterAll(async () => {
  await p?.stop();
});

const queries = () => (p.cache.list(Kinds.Query, p.ns) ?? []) as Query[];
const cancelQuery = (name: string) =>
  createClient({ kc: kubeConfig('admin'), scheme: berthScheme() }).patch(
    Kinds.Query,
    { namespace: p.ns, name },
    { type: 'merge', patch: { spec: { cancel: true } } },
  );
// Generous bounds: the machine these run on is shared with other suites (waits are for conditions).
vi.setConfig({ testTimeout: 120_000 });
const REVISIONS: Array<[Revision, string]> = [
  ['modern', MODERN],
  ['auto', MODERN],
  ['legacy-v2', LEGACY],
  ['legacy-v1', LEGACY],
];

describe.each(REVISIONS)('an MCP client speaking %s', (revision, version) => {
  it(`negotiates ${version} and lists the two tools`, async () => {
    const client = await connect(p.api.url, revision);
    try {
      expect(client.protocolVersion()).toBe(version);
      expect(!!client.sessionId()).toBe(version === LEGACY);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['invoke_target', 'list_targets']);
      expect(tools.find((t) => t.name === 'list_targets')?.annotations?.readOnlyHint).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('list_targets answers the ids /compat/v1/models lists', async () => {
    const models = await (await fetch(`${p.api.url}/compat/v1/models`)).json();
    const client = await connect(p.api.url, revision);
    try {
      const res = await client.callTool({ name: 'list_targets', arguments: {} });
      const ids = models.data.map((m: { id: string }) => m.id);
      expect(res.structuredContent).toEqual({ targets: ids });
      expect(textOf(res).split('\n')).toEqual(ids);
      expect(ids).toEqual(expect.arrayContaining(['agent/helper', 'team/duo', 'model/default', 'tool/echo']));
    } finally {
      await client.close();
    }
  });

  it('invoke_target runs a Query and answers its result text, in the session asked for', async () => {
    const client = await connect(p.api.url, revision);
    try {
      const sessionId = `mcp-${revision}`;
      const res = await client.callTool({
        name: 'invoke_target',
        arguments: { target: 'agent/helper', input: `hello ${revision}`, sessionId },
      });
      expect(res.isError).toBeFalsy();
      expect(textOf(res)).toBe(`echo: hello ${revision}`);
      const name = String(res._meta?.['berth.dev/query']);
      expect(name).toMatch(/^mcp-query-[0-9a-f]{10}$/);
      const q = queries().find((x) => x.metadata.name === name);
      expect(q?.spec.sessionId).toBe(sessionId);
      expect(q?.spec.target).toEqual({ type: 'agent', name: 'helper' });
      expect(q?.status?.phase).toBe('done');
    } finally {
      await client.close();
    }
  });

  it('streams the answer as progress notifications when asked', async () => {
    const client = await connect(p.api.url, revision);
    try {
      const seen: Array<{ progress: number; message?: string }> = [];
      const res = await client.callTool(
        { name: 'invoke_target', arguments: { target: 'agent/streamer', input: 'stream please' } },
        { onprogress: (u) => seen.push(u) },
      );
      expect(textOf(res)).toBe(WORDS);
      expect(seen.length).toBeGreaterThan(1);
      expect(seen.map((u) => u.progress)).toEqual(seen.map((_, i) => i + 1));
      expect(seen.map((u) => u.message).join('')).toBe(WORDS);
    } finally {
      await client.close();
    }
  });

  it('a target that does not exist, or is no target, is a tool error the model can read', async () => {
    const client = await connect(p.api.url, revision);
    try {
      for (const [target, says] of [
        ['agent/nobody', /agent\/nobody does not exist in namespace/],
        ['robot/x', /target must be "agent\/<name>"/],
        ['constructor/x', /target must be/],
        ['__proto__/x', /target must be/],
        ['agent/', /names no target/],
      ] as const) {
        const res = await client.callTool({ name: 'invoke_target', arguments: { target, input: 'x' } });
        expect(res.isError, target).toBe(true);
        expect(textOf(res), target).toMatch(says);
      }
      const before = queries().length;
      const wrong = await client
        .callTool({ name: 'invoke_target', arguments: { target: 42, input: 'x' } })
        .then(
          (r) => r,
          (e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] }),
        );
      expect(wrong.isError).toBe(true);
      expect(queries().length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('cancelling the call cancels its Query', async () => {
    const client = await connect(p.api.url, revision);
    const stop = new AbortController();
    const before = new Set(queries().map((q) => q.metadata.name));
    const call = client.callTool(
      { name: 'invoke_target', arguments: { target: 'agent/slow', input: 'take your time' } },
      { signal: stop.signal },
    );
    const started = await vi.waitFor(
      () => {
        const q = queries().find((x) => !before.has(x.metadata.name) && x.spec.target.name === 'slow');
        if (q?.status?.phase !== 'running') throw new Error('the Query is not running yet');
        return q.metadata.name;
      },
      { timeout: 60_000, interval: 50 },
    );
    stop.abort('the user pressed stop');
    await expect(call).rejects.toBeDefined();
    await p.cache.waitFor(Kinds.Query, p.ns, started, (q) => q?.status?.phase === 'canceled', {
      timeoutMs: 60_000,
    });
    await client.close();
  });
});

describe('a shutdown of the API service', () => {
  it.each(['modern', 'legacy-v1'] as Revision[])(
    'ends a %s call in flight but leaves its Query running',
    async (revision) => {
      const api = await p.startApi({});
      const client = await connect(api.url, revision);
      const before = new Set(queries().map((q) => q.metadata.name));
      const call = client.callTool({
        name: 'invoke_target',
        arguments: { target: 'agent/slow', input: `outlive the API (${revision})` },
      });
      const name = await vi.waitFor(
        () => {
          const q = queries().find((x) => !before.has(x.metadata.name) && x.spec.target.name === 'slow');
          if (q?.status?.phase !== 'running') throw new Error('the Query is not running yet');
          return q.metadata.name;
        },
        { timeout: 60_000, interval: 50 },
      );
      await api.close(0);
      // The call answers before its transport closes: a tool error naming the Query.
      const res = await call;
      expect(res.isError).toBe(true);
      expect(textOf(res)).toBe(
        `the API service is shutting down; query ${name} goes on (kubectl get query ${name})`,
      );
      await client.close().catch(() => {});
      const q = queries().find((x) => x.metadata.name === name);
      expect(q?.spec.cancel).toBe(false);
      expect(q?.status?.phase).toBe('running');
      // The test's own cleanup: the Query would run on for the fake model's 20 s.
      await cancelQuery(name);
    },
  );
});
