/**
 * The in-memory rows of issue 32's table, each on a fresh broker process of the checkout under test.
 * Every row returns its figures by name; rows.ts runs them for each checkout in alternating rounds.
 */
import autocannon from 'autocannon';
import { type ChunkWrite, chunkDeliveryInChild } from '../chunk-delivery.ts';
import { fanOut } from '../fanout.ts';
import { agentExport } from '../otlp-shapes.ts';
import { BENCH_POST } from '../process.ts';
import { type BrokerProc, settledRss } from './broker.ts';

export type Figures = Record<string, number>;
export interface RowContext {
  seconds: number;
  /** A fresh broker of the checkout under test (stopped by the caller). */
  broker(): Promise<BrokerProc>;
}
export type Row = (ctx: RowContext) => Promise<Figures>;

const json = { 'content-type': 'application/json' };

async function check(r: Response, what: string) {
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${await r.text()}`);
  await r.arrayBuffer();
}

export const chunkLine = (i: number) =>
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'bench-model',
    choices: [{ index: 0, delta: { content: `token ${i} ` }, finish_reason: null }],
  });
const NDJSON_BODY = `${Array.from({ length: 20_000 }, (_, i) => chunkLine(i)).join('\n')}\n`;

/** One POST of 20,000 NDJSON lines: the first on the fresh process, then the best of four more. */
export async function ndjsonRow(b: BrokerProc): Promise<Figures> {
  const rates: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const r = await fetch(`${b.url}/stream/bulk-${i}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: NDJSON_BODY,
    });
    const { chunks_received } = (await r.json()) as { chunks_received: number };
    if (chunks_received !== 20_000) throw new Error(`bulk NDJSON stored ${chunks_received} of 20,000`);
    rates.push(Math.round(20_000 / ((performance.now() - t0) / 1000)));
  }
  return {
    'bulk NDJSON, first POST (chunks/s)': rates[0] ?? 0,
    'bulk NDJSON, warm (chunks/s)': Math.max(...rates.slice(1)),
  };
}

const SEED_BODY = JSON.stringify({
  conversation_id: 'seed',
  query_id: 'seed-q',
  messages: Array.from({ length: 100 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `seeded message ${i}`,
  })),
});

/** Batched message writes: 100 messages per POST, one client after another (c=1) and c=4. */
export async function seedRow(b: BrokerProc, seconds: number): Promise<Figures> {
  const out: Figures = {};
  for (const c of [1, 4]) {
    const run = await autocannon({
      url: `${b.url}/messages`,
      connections: c,
      duration: seconds,
      method: 'POST',
      headers: json,
      body: SEED_BODY,
    });
    if (run.non2xx) throw new Error(`seed: ${run.non2xx} non-2xx`);
    out[`batched seed c=${c} (msgs/s)`] = Math.round(run.requests.average * 100);
  }
  return out;
}

export async function postRow(b: BrokerProc, seconds: number, urls = [b.url]): Promise<Figures> {
  const runs = await Promise.all(
    urls.map((url) =>
      autocannon({
        url: `${url}/messages`,
        connections: Math.round(50 / urls.length),
        duration: seconds,
        method: 'POST',
        headers: json,
        body: JSON.stringify(BENCH_POST),
      }),
    ),
  );
  if (runs.some((r) => r.non2xx)) throw new Error('POST /messages: non-2xx answers');
  return {
    'POST /messages c=50 (req/s)': Math.round(runs.reduce((a, r) => a + r.requests.average, 0)),
    'POST /messages p99 (ms)': Math.max(...runs.map((r) => r.latency.p99)),
  };
}

export async function getRow(b: BrokerProc, seconds: number, readUrl = b.url): Promise<Figures> {
  const batch = Array.from({ length: 1000 }, (_, i) => ({
    role: 'user',
    content: `message ${i} of the paging set`,
  }));
  for (let i = 0; i < 20; i++)
    await check(
      await fetch(`${b.url}/messages`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ conversation_id: `paging-${i % 4}`, query_id: `q${i}`, messages: batch }),
      }),
      'GET row fill',
    );
  const list = await autocannon({ url: `${readUrl}/messages?limit=100`, connections: 50, duration: seconds });
  const conv = await autocannon({
    url: `${readUrl}/messages?conversation_id=paging-2&limit=100`,
    connections: 50,
    duration: seconds,
  });
  if (list.non2xx || conv.non2xx) throw new Error('GET /messages: non-2xx answers');
  return {
    'GET /messages list (req/s)': Math.round(list.requests.average),
    'GET /messages by conversation (req/s)': Math.round(conv.requests.average),
  };
}

export async function otlpRow(b: BrokerProc, seconds: number): Promise<Figures> {
  const run = await autocannon({
    url: `${b.url}/v1/traces`,
    connections: 20,
    duration: seconds,
    method: 'POST',
    headers: json,
    body: agentExport(7),
  });
  if (run.non2xx) throw new Error(`OTLP: ${run.non2xx} non-2xx`);
  return { 'OTLP/JSON agent-shaped (spans/s)': Math.round(run.requests.average * 20) };
}

/** Per way of writing: the writers' query prefix and the rows' label. */
const WRITES: Record<ChunkWrite, { prefix: string; label: string }> = {
  post: { prefix: 'lat', label: '' },
  lean: { prefix: 'lean', label: ' lean client' },
  ndjson: { prefix: 'nd', label: ' NDJSON uploads' },
};

export async function deliveryRow(
  b: BrokerProc,
  seconds: number,
  streams: number,
  /** `watchUrl`: watch on another broker; `write`: how the writers send (default a POST per chunk). */
  o: { watchUrl?: string; write?: ChunkWrite } = {},
): Promise<Figures> {
  const { watchUrl, write = 'post' } = o;
  const { prefix, label } = WRITES[write];
  const d = await chunkDeliveryInChild(b.url, { streams, rate: 50, seconds, watchUrl, write, prefix });
  const k = `chunk delivery ${streams}×50/s${label}`;
  return {
    [`${k} p50 (ms)`]: d.p50,
    [`${k} p99 (ms)`]: d.p99,
    [`${k} p999 (ms)`]: d.p999,
    [`${k} max (ms)`]: d.max,
    [`${k} delivered`]: d.delivered,
  };
}

export async function fanOutRow(
  b: BrokerProc,
  seconds: number,
  watchers: number,
  rate: number,
  postUrl?: string,
): Promise<Figures> {
  const before = b.rssMb();
  const f = await fanOut(b.url, { watchers, rate, seconds, ...(postUrl ? { postUrl } : {}) });
  const k = `SSE ${watchers} watchers @${rate}/s`;
  const rss = b.rssMb();
  return {
    [`${k} p99 (ms)`]: f.p99,
    [`${k} delivered`]: f.delivered,
    [`${k} RSS (MB)`]: rss,
    [`${k} KB per watcher`]: Math.round(((rss - before) * 1024) / watchers),
  };
}

export const MEMORY_ROWS: Record<string, Row> = {
  idle: async ({ broker }) => {
    const b = await broker();
    try {
      return { 'idle RSS (MB)': await settledRss(b) };
    } finally {
      await b.stop();
    }
  },
  delivery: async ({ broker, seconds }) => {
    const out: Figures = {};
    // Each chunk a POST of its own (Node's client, then the minimal one), and each stream one NDJSON
    // upload (how the engine writes).
    for (const write of ['post', 'lean', 'ndjson'] as const)
      for (const streams of [50, 200]) {
        const b = await broker();
        try {
          Object.assign(out, await deliveryRow(b, seconds, streams, { write }));
        } finally {
          await b.stop();
        }
      }
    return out;
  },
  ingest: async ({ broker, seconds }) => {
    const out: Figures = {};
    const rows: Array<[string, (b: BrokerProc) => Promise<Figures>]> = [
      ['bulk NDJSON', ndjsonRow],
      ['batched seed', (b) => seedRow(b, seconds)],
      ['POST /messages', (b) => postRow(b, seconds)],
      ['OTLP', (b) => otlpRow(b, seconds)],
    ];
    for (const [name, row] of rows) {
      const b = await broker();
      try {
        Object.assign(out, await row(b), { [`RSS after ${name} (MB)`]: b.rssMb() });
      } finally {
        await b.stop();
      }
    }
    return out;
  },
  get: async ({ broker, seconds }) => {
    const b = await broker();
    try {
      return await getRow(b, seconds);
    } finally {
      await b.stop();
    }
  },
  fanout: async ({ broker, seconds }) => {
    const out: Figures = {};
    for (const [watchers, rate] of [
      [1000, 200],
      [5000, 100],
    ] as const) {
      const b = await broker();
      try {
        Object.assign(out, await fanOutRow(b, seconds, watchers, rate));
      } finally {
        await b.stop();
      }
    }
    return out;
  },
};
