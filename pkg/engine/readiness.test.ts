import { describe, expect, it } from 'vitest';
import type { Agent, MCPServer, Memory, Model, Query, Team, Tool } from '../api/index.ts';
import type { ResourceLookup } from './contract.ts';
import { NOT_FOUND_GRACE_MS, unresolvedDependency } from './readiness.ts';

type Objects = {
  memory?: Record<string, Partial<Memory>>;
  server?: Record<string, Partial<MCPServer>>;
  tool?: Record<string, Partial<Tool>>;
  agent?: Record<string, Partial<Agent>>;
  team?: Record<string, Partial<Team>>;
  model?: Record<string, Partial<Model>>;
};

/** A lookup over plain objects of namespace `ns` (the engine's seam, no cache). */
function lookup(o: Objects): ResourceLookup {
  const of =
    <T>(m: Record<string, Partial<T>> | undefined) =>
    (ns: string, name: string) =>
      ns === 'ns' && m?.[name] ? (m[name] as T) : undefined;
  return {
    memory: of(o.memory),
    mcpServer: of(o.server),
    tool: of(o.tool),
    agent: of(o.agent),
    team: of(o.team),
    model: of(o.model),
    secretValue: () => undefined,
  };
}

const query = (target: string, memory?: string) =>
  ({
    metadata: { name: 'q', namespace: 'ns' },
    spec: {
      input: 'hi',
      target: { type: target.split('/')[0], name: target.split('/')[1] },
      ...(memory ? { memory: { name: memory } } : {}),
    },
  }) as Query;

const resolved = { spec: { address: { value: 'http://m' } }, status: { lastResolvedAddress: 'http://m' } };
const unresolvedMemory = { spec: {}, status: { phase: 'error', message: 'Service ns/mem not found' } };
const serviceServer = { spec: { address: { valueFrom: { serviceRef: { name: 's', port: 80 } } } } };

describe('unresolvedDependency', () => {
  it('waits for an existing Memory without an address, the named one or "default"', () => {
    const l = lookup({ memory: { default: unresolvedMemory as Partial<Memory>, other: resolved } });
    expect(unresolvedDependency(l, query('model/m'))).toEqual({
      reason: 'MemoryNotReady',
      kind: 'Memory',
      name: 'default',
      message: 'waiting for Memory default to be resolved: Service ns/mem not found',
    });
    expect(unresolvedDependency(l, query('model/m', 'other'))).toBeUndefined();
  });

  it('does not wait for a Memory or MCPServer refused as written (a Secret that did not opt in, an address not allowed)', () => {
    const refusedStatus = (reason: string) => ({
      phase: 'error',
      message: `refused: ${reason}`,
      conditions: [{ type: 'Ready', status: 'False', reason }],
    });
    for (const reason of ['SecretNotUsable', 'ServiceNotWatched', 'InvalidAddress']) {
      const l = lookup({
        memory: { default: { spec: {}, status: refusedStatus(reason) } as Partial<Memory> },
        tool: { t: { spec: { type: 'mcp', mcp: { serverRef: { name: 's' } } } } as Partial<Tool> },
        server: { s: { ...serviceServer, status: refusedStatus(reason) } as Partial<MCPServer> },
      });
      expect(unresolvedDependency(l, query('tool/t'))).toBeUndefined();
    }
    // A Service that is not there yet is waited for.
    const missing = lookup({
      memory: { default: { spec: {}, status: refusedStatus('ServiceNotFound') } as Partial<Memory> },
    });
    expect(unresolvedDependency(missing, query('model/m'))).toMatchObject({ reason: 'MemoryNotReady' });
  });

  it('does not wait for a Memory that does not exist (the run fails a named one, runs without a default)', () => {
    const l = lookup({});
    expect(unresolvedDependency(l, query('model/m', 'missing'))).toBeUndefined();
    expect(unresolvedDependency(l, query('model/m'))).toBeUndefined();
  });

  it(`looks for a named Memory or an MCPServer not in the cache for ${NOT_FOUND_GRACE_MS} ms after the Query's creation`, () => {
    const created = Date.parse('2026-01-01T00:00:00Z');
    const young = (target: string, memory?: string) => {
      const q = query(target, memory);
      q.metadata.creationTimestamp = new Date(created).toISOString();
      return q;
    };
    const l = lookup({
      tool: {
        t: { spec: { type: 'mcp', mcp: { serverRef: { name: 'gone' }, toolName: 'x' } } } as Partial<Tool>,
      },
      model: { m: {} },
    });
    const soon = created + 1000;
    expect(unresolvedDependency(l, young('model/m', 'late'), soon)).toEqual({
      reason: 'MemoryNotReady',
      kind: 'Memory',
      name: 'late',
      until: created + NOT_FOUND_GRACE_MS,
      message: 'waiting for Memory late: not found in namespace ns yet',
    });
    expect(unresolvedDependency(l, young('tool/t'), soon)).toMatchObject({
      reason: 'MCPServerNotReady',
      name: 'gone',
      until: created + NOT_FOUND_GRACE_MS,
    });
    // The default Memory is never looked for: a namespace without one would hold every Query.
    expect(unresolvedDependency(l, young('model/m'), soon)).toBeUndefined();
    // Past the grace: missing means missing, the run fails it.
    const later = created + NOT_FOUND_GRACE_MS;
    expect(unresolvedDependency(l, young('model/m', 'late'), later)).toBeUndefined();
    expect(unresolvedDependency(l, young('tool/t'), later)).toBeUndefined();
  });

  it(`looks for a target, and the Agents, Teams, Tools and Models it refers to, for ${NOT_FOUND_GRACE_MS} ms when not in the cache`, () => {
    const created = Date.parse('2026-01-01T00:00:00Z');
    const young = (target: string) => {
      const q = query(target);
      q.metadata.creationTimestamp = new Date(created).toISOString();
      return q;
    };
    const l = lookup({
      agent: {
        a: { spec: { modelRef: { name: 'm' }, tools: [{ name: 'later' }] } } as Partial<Agent>,
        noModel: { spec: { modelRef: { name: 'notYet' } } } as Partial<Agent>,
      },
      team: { t: { spec: { members: [{ type: 'agent', name: 'ghost' }] } } as Partial<Team> },
      model: { m: {} },
    });
    const soon = created + 1000;
    const until = created + NOT_FOUND_GRACE_MS;
    const notYet = (kind: string, name: string) => ({
      reason: 'TargetNotReady',
      kind,
      name,
      until,
      message: `waiting for ${kind} ${name}: not found in namespace ns yet`,
    });
    expect(unresolvedDependency(l, young('agent/missing'), soon)).toEqual(notYet('Agent', 'missing'));
    expect(unresolvedDependency(l, young('team/gone'), soon)).toEqual(notYet('Team', 'gone'));
    expect(unresolvedDependency(l, young('tool/none'), soon)).toEqual(notYet('Tool', 'none'));
    expect(unresolvedDependency(l, young('model/nothing'), soon)).toEqual(notYet('Model', 'nothing'));
    // What a present target refers to: an Agent's Model and Tools, a Team's members.
    expect(unresolvedDependency(l, young('agent/noModel'), soon)).toEqual(notYet('Model', 'notYet'));
    expect(unresolvedDependency(l, young('agent/a'), soon)).toEqual(notYet('Tool', 'later'));
    expect(unresolvedDependency(l, young('team/t'), soon)).toEqual(notYet('Agent', 'ghost'));
    expect(unresolvedDependency(l, young('model/m'), soon)).toBeUndefined();
    // Past the grace, and for a Query whose age is unknown: missing means missing, the run fails it.
    for (const t of ['agent/missing', 'team/gone', 'tool/none', 'model/nothing', 'agent/a', 'team/t'])
      expect(unresolvedDependency(l, young(t), until)).toBeUndefined();
    expect(unresolvedDependency(l, query('agent/missing'), soon)).toBeUndefined();
  });

  it('waits for the MCPServer of an mcp Tool target; a direct spec.address.value needs no resolution', () => {
    const mcpTool = (server: string) => ({
      spec: { type: 'mcp', mcp: { serverRef: { name: server }, toolName: 't' } },
    });
    const l = lookup({
      server: {
        svc: serviceServer as Partial<MCPServer>,
        direct: { spec: { address: { value: 'http://d' } } } as Partial<MCPServer>,
      },
      tool: { a: mcpTool('svc') as Partial<Tool>, b: mcpTool('direct') as Partial<Tool> },
    });
    expect(unresolvedDependency(l, query('tool/a'))).toMatchObject({
      reason: 'MCPServerNotReady',
      kind: 'MCPServer',
      name: 'svc',
    });
    expect(unresolvedDependency(l, query('tool/b'))).toBeUndefined();
  });

  it("walks an Agent's tools and a Team's members, nested teams and cycles included", () => {
    const l = lookup({
      server: { svc: serviceServer as Partial<MCPServer> },
      agent: {
        plain: { spec: { prompt: 'p', tools: [{ builtin: 'ask_user' }] } } as Partial<Agent>,
        user: { spec: { prompt: 'p', tools: [{ mcpServerRef: { name: 'svc' } }] } } as Partial<Agent>,
      },
      team: {
        outer: { spec: { members: [{ type: 'team', name: 'inner' }] } } as Partial<Team>,
        inner: {
          spec: {
            members: [
              { type: 'agent', name: 'plain' },
              { type: 'team', name: 'outer' }, // a cycle: the run refuses it, the walk stops
              { type: 'agent', name: 'user' },
            ],
          },
        } as Partial<Team>,
        quiet: { spec: { members: [{ type: 'agent', name: 'plain' }] } } as Partial<Team>,
      },
    });
    expect(unresolvedDependency(l, query('agent/user'))?.name).toBe('svc');
    expect(unresolvedDependency(l, query('team/outer'))?.name).toBe('svc');
    expect(unresolvedDependency(l, query('team/quiet'))).toBeUndefined();
    expect(unresolvedDependency(l, query('agent/missing'))).toBeUndefined();
  });
});
