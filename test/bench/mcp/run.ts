/**
 * Added latency of an MCP tool call through the engine (issue 29): the same tool (`add`) of the same
 * server, per revision, called three ways —
 *
 * - `direct`: the official SDK client of the revision, connected once and kept (the cheapest a
 *   caller can do: no probe, no handshake per call; for 2025-11-25 one session for all calls);
 * - `client`: Berth's McpClient.callTool alone (a session per call, the revision remembered);
 * - `engine`: a `tool/<name>` Query of a Tool of type mcp run by the query engine (no broker, no
 *   Memory: the engine's own path — span, events dropped, endpoint and Secret resolution, the call).
 *
 * p50/p99 at concurrency 1 and 20; `added` is engine − direct at the same percentile. The servers
 * run in their own process (servers.ts). Writes results.json beside this file.
 * Usage: node test/bench/mcp/run.ts [--calls 300] [--warmup 30]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { cpus, getPriority, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { API_VERSION, type MCPServer, type Query, type Tool } from '../../../pkg/api/index.ts';
import { createHttpClient } from '../../../pkg/engine/http.ts';
import { createQueryEngine, type ResourceLookup } from '../../../pkg/engine/index.ts';
import { McpClient } from '../../../pkg/engine/mcp/index.ts';
import { createLogger } from '../../../pkg/log/index.ts';
import { pct } from '../support.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '300' }, warmup: { type: 'string', default: '30' } },
});
const CALLS = Number(values.calls);
const WARMUP = Number(values.warmup);
const NS = 'bench-mcp';
const RESULTS = join(import.meta.dirname, 'results.json');

type Call = (i: number) => Promise<unknown>;

/** Latencies (ms) of `total` calls made by `concurrency` callers at once; failures are counted. */
async function measure(call: Call, concurrency: number, total: number, into: Sample): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        try {
          await call(i);
          into.times.push(performance.now() - t0);
        } catch (err) {
          into.errors++;
          into.lastError = (err as Error).message;
        }
      }
    }),
  );
}

interface Sample {
  times: number[];
  errors: number;
  lastError?: string;
}

/** The paths take turns (ROUNDS rounds of total/ROUNDS calls each): load that drifts hits all alike. */
const ROUNDS = 5;

const round = (n: number) => Math.round(n * 100) / 100;
function summary(s: Sample) {
  const t = [...s.times].sort((a, b) => a - b);
  return {
    p50: round(pct(t, 50)),
    p99: round(pct(t, 99)),
    n: t.length,
    errors: s.errors,
    ...(s.lastError ? { lastError: s.lastError } : {}),
  };
}

const meta = (name: string) => ({ name, namespace: NS, uid: `uid-${name}`, generation: 1 });
function objects(urls: Record<string, string>) {
  const servers = new Map<string, MCPServer>();
  const tools = new Map<string, Tool>();
  for (const [revision, url] of Object.entries(urls)) {
    servers.set(revision, {
      apiVersion: API_VERSION,
      kind: 'MCPServer',
      metadata: meta(revision),
      spec: { address: { value: url }, transport: 'streamable-http' },
      status: { phase: 'ready', lastResolvedAddress: url },
    });
    tools.set(`add-${revision}`, {
      apiVersion: API_VERSION,
      kind: 'Tool',
      metadata: meta(`add-${revision}`),
      spec: { type: 'mcp', mcp: { serverRef: { name: revision }, toolName: 'add' } },
    });
  }
  const lookup: ResourceLookup = {
    agent: () => undefined,
    team: () => undefined,
    model: () => undefined,
    memory: () => undefined,
    tool: (_ns, name) => tools.get(name),
    mcpServer: (_ns, name) => servers.get(name),
    secretValue: () => undefined,
  };
  return lookup;
}

function query(tool: string, i: number): Query {
  return {
    apiVersion: API_VERSION,
    kind: 'Query',
    metadata: meta(`q-${tool}-${i}`),
    spec: {
      input: JSON.stringify({ a: i, b: 1 }),
      target: { type: 'tool', name: tool },
      ttl: '720h',
      timeout: '5m',
      cancel: false,
    },
  };
}

async function directClient(revision: string, url: string) {
  if (revision === 'modern') {
    const c = new ModernClient({ name: 'bench', version: '0' }, { versionNegotiation: { mode: 'auto' } });
    await c.connect(new ModernHttp(new URL(url)));
    return {
      call: (i: number) => c.callTool({ name: 'add', arguments: { a: i, b: 1 } }),
      close: () => c.close(),
    };
  }
  const c = new LegacyClient({ name: 'bench', version: '0' });
  const t = new LegacyHttp(new URL(url));
  await c.connect(t);
  return {
    call: (i: number) => c.callTool({ name: 'add', arguments: { a: i, b: 1 } }),
    close: async () => {
      await t.terminateSession().catch(() => undefined);
      await c.close();
    },
  };
}

const servers = spawn(process.execPath, [join(import.meta.dirname, 'servers.ts')], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const [line] = (await once(createInterface({ input: servers.stdout as NodeJS.ReadableStream }), 'line')) as [
  string,
];
const urls = JSON.parse(line) as Record<'modern' | 'legacy', string>;
const lookup = objects(urls);
const engine = createQueryEngine({ lookup, logger: createLogger({ level: 'silent' }) });
const http = createHttpClient();
const mcp = new McpClient(http);

const results: Record<string, unknown> = {};
for (const revision of ['modern', 'legacy'] as const) {
  const url = urls[revision];
  const direct = await directClient(revision, url);
  const ep = { label: `MCPServer ${NS}/${revision}`, url, headers: {}, timeoutMs: 30_000, maxRetries: 2 };
  const never = new AbortController().signal;
  const paths: Record<string, Call> = {
    direct: direct.call,
    client: (i) => mcp.callTool(ep, 'add', { a: i, b: 1 }, { signal: never }),
    engine: async (i) => {
      const out = await engine.run(query(`add-${revision}`, i), { signal: never });
      if (out.phase !== 'done')
        throw new Error(`query ended ${out.phase}: ${'message' in out ? out.message : ''}`);
    },
  };
  const revisionResults: Record<string, unknown> = {};
  for (const concurrency of [1, 20]) {
    const total = concurrency === 1 ? CALLS : CALLS * 4;
    const samples = Object.fromEntries(
      Object.keys(paths).map((k) => [k, { times: [], errors: 0 } as Sample]),
    );
    for (const call of Object.values(paths))
      for (let i = 0; i < WARMUP; i++) await call(i).catch(() => undefined);
    for (let r = 0; r < ROUNDS; r++)
      for (const [name, call] of Object.entries(paths))
        await measure(call, concurrency, Math.ceil(total / ROUNDS), samples[name] as Sample);
    const byPath = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summary(v)]));
    const { direct: d, engine: e } = byPath as Record<string, ReturnType<typeof summary>>;
    revisionResults[`c${concurrency}`] = {
      ...byPath,
      added: { p50: round((e?.p50 ?? 0) - (d?.p50 ?? 0)), p99: round((e?.p99 ?? 0) - (d?.p99 ?? 0)) },
    };
    console.log(revision, `c=${concurrency}`, JSON.stringify(revisionResults[`c${concurrency}`]));
  }
  results[revision === 'modern' ? '2026-07-28' : '2025-11-25'] = revisionResults;
  await direct.close();
}
await engine.close();
await http.close();
servers.stdin?.end();
await once(servers, 'exit');

const out = {
  at: new Date().toISOString(),
  unit: 'ms per tool call (p50/p99); added = engine - direct',
  machine: { cpus: cpus().length, loadavg: loadavg().map(round).join(' '), node: process.version },
  // Taken under `nice -n 19` on a shared 2-core machine when niceness > 0: absolute figures are high.
  niceness: getPriority(),
  calls: { c1: CALLS, c20: CALLS * 4, warmup: WARMUP },
  results,
};
writeFileSync(RESULTS, `${JSON.stringify(out, null, 2)}\n`);
console.log(`wrote ${RESULTS}`);
