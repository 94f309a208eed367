/**
 * The least a broker can do for the chunk-delivery row, on `node:http` alone: `POST /stream/{query}`
 * parses the JSON chunk, numbers it and writes it to the query's SSE watchers; `GET /stream/{query}`
 * replays what is stored and follows. No auth, validation, metrics, logging or framework. It is a
 * yardstick, not a broker: run beside `berth broker` under the same generator (`floor.ts`), it says
 * how much of the delivery tail is this machine's and how much is Berth's path. An NDJSON upload
 * (`application/x-ndjson`) is published line by line as it arrives; in FLOOR_MODE=hono its body is
 * read from `c.req.raw.body` (the adapter's Web stream), through a `pipeThrough` with FLOOR_PIPE=1,
 * or from the Node request itself with FLOOR_PIPE=node (docs/broker.md, session (7)).
 */
import http, { type ServerResponse } from 'node:http';

interface Stream {
  records: string[];
  watchers: Set<ServerResponse>;
}

const streams = new Map<string, Stream>();
const streamOf = (q: string) => {
  let s = streams.get(q);
  if (!s) {
    s = { records: [], watchers: new Set() };
    streams.set(q, s);
  }
  return s;
};

const plain = (req: http.IncomingMessage, res: ServerResponse) => {
  const m = /^\/stream\/([^/?]+)/.exec(req.url ?? '');
  if (!m?.[1]) {
    res.writeHead(404).end();
    return;
  }
  const s = streamOf(m[1]);
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(s.records.join(''));
    s.watchers.add(res);
    res.on('close', () => s.watchers.delete(res));
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  const ndjson = req.headers['content-type'] === 'application/x-ndjson';
  req.on('data', (t: string) => {
    body += t;
    if (!ndjson) return;
    const lines = body.split('\n');
    body = lines.pop() ?? '';
    for (const line of lines) if (line) publish(s, line);
  });
  req.on('end', () => {
    if (body) publish(s, body);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
};

function publish(s: Stream, chunk: string) {
  JSON.parse(chunk);
  const frame = `id: ${s.records.length + 1}\ndata: ${chunk}\n\n`;
  s.records.push(frame);
  for (const w of s.watchers) w.write(frame);
}

/** FLOOR_MODE=hono: the same through Hono and @hono/node-server (what that layer costs). */
async function honoListener(): Promise<http.RequestListener> {
  const { Hono } = await import('hono');
  const { getRequestListener } = await import('@hono/node-server');
  const { RESPONSE_ALREADY_SENT } = await import('@hono/node-server/utils/response');
  const app = new Hono<{ Bindings: { outgoing: ServerResponse; incoming: http.IncomingMessage } }>();
  app.get('/stream/:q', (c) => {
    const s = streamOf(c.req.param('q'));
    const res = c.env.outgoing;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(s.records.join(''));
    s.watchers.add(res);
    res.on('close', () => s.watchers.delete(res));
    return RESPONSE_ALREADY_SENT;
  });
  app.post('/stream/:q', async (c) => {
    const s = streamOf(c.req.param('q'));
    if (c.req.header('content-type') === 'application/x-ndjson') {
      // The request body as a Web stream, read as it arrives (what the broker's NDJSON route does).
      const decoder = new TextDecoder();
      let rest = '';
      const body: AsyncIterable<Uint8Array> =
        process.env.FLOOR_PIPE === 'node'
          ? c.env.incoming
          : process.env.FLOOR_PIPE === '1'
            ? (c.req.raw.body as ReadableStream<Uint8Array>).pipeThrough(
                new TransformStream<Uint8Array, Uint8Array>(),
              )
            : (c.req.raw.body as ReadableStream<Uint8Array>);
      for await (const bytes of body) {
        const lines = (rest + decoder.decode(bytes, { stream: true })).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) if (line) publish(s, line);
      }
      if (rest) publish(s, rest);
      return c.json({ ok: true });
    }
    const body = await c.req.text();
    JSON.parse(body);
    const frame = `id: ${s.records.length + 1}\ndata: ${body}\n\n`;
    s.records.push(frame);
    for (const w of s.watchers) w.write(frame);
    return c.json({ ok: true });
  });
  return getRequestListener(app.fetch);
}

const server = http.createServer(process.env.FLOOR_MODE === 'hono' ? await honoListener() : plain);

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(
    JSON.stringify({ msg: 'broker listening', port: typeof address === 'object' && address?.port }),
  );
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
