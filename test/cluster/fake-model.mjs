// An OpenAI-compatible chat completions endpoint for the cluster suite, run INSIDE the cluster as a
// pod of the berth image (`node /fake/fake-model.mjs`, this file mounted from a ConfigMap): the
// Model's baseUrl is then `http://fake-model.<ns>.svc.cluster.local/v1`, reached through the
// cluster's Service and DNS like a real in-cluster provider. No dependencies: node's http only.
// It answers `cluster echo: <last user text>`, streamed word by word when asked to stream.
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 8080);

function lastUser(messages) {
  for (let i = (messages ?? []).length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === 'user') return typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
  }
  return '';
}

const server = createServer(async (req, res) => {
  if (req.method === 'GET' && (req.url === '/healthz' || req.url === '/')) return res.end('ok');
  if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' });
    return res.end('{"error":{"message":"not found"}}');
  }
  const parts = [];
  for await (const p of req) parts.push(p);
  const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
  const text = `cluster echo: ${lastUser(body.messages)}`;
  const id = `chatcmpl-cluster-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = {
    prompt_tokens: 10,
    completion_tokens: text.split(/\s+/).length,
    total_tokens: 10 + text.split(/\s+/).length,
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage,
      }),
    );
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta, finish, extra = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
    );
  const words = text.split(' ');
  chunk({ role: 'assistant', content: '' }, null);
  for (const [i, w] of words.entries()) chunk({ content: i === 0 ? w : ` ${w}` }, null);
  chunk({}, 'stop');
  if (body.stream_options?.include_usage)
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`,
    );
  res.end('data: [DONE]\n\n');
});

server.listen(port, () => console.log(JSON.stringify({ msg: 'fake model listening', port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
