// One chat turn over /compat/v1: the request, the OpenAI-style SSE answer read delta by delta,
// and what identifies it (the Query's name is every chunk's id).
import { api, base, nsPath, signIn, signsIn } from './api.js';

/** Reads an SSE body: `onChunk` for each data frame until [DONE]. */
async function readSse(res, onChunk) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    let end = buffer.indexOf('\n');
    while (end >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      end = buffer.indexOf('\n');
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') return;
      let chunk;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue;
      }
      if (chunk.error) throw new Error(chunk.error.message ?? 'the stream failed');
      onChunk(chunk);
    }
  }
}

/**
 * Sends `content` to `target` in `conversationId` (none: a new conversation in the namespace's
 * Memory). `on.query(name)` once the Query is known, `on.delta(text)` as the answer streams.
 */
export async function sendTurn({ target, content, conversationId, sessionId, signal }, on) {
  const metadata = { sessionId, ...(conversationId ? { conversationId } : {}) };
  const res = await fetch(`${base}/api/compat/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    credentials: 'same-origin',
    signal,
    // The Memory keeps the history: only the new message goes, with the conversation to continue.
    body: JSON.stringify({ model: target, messages: [{ role: 'user', content }], stream: true, metadata }),
  });
  if (res.status === 401 && signsIn) signIn();
  if (!res.ok)
    throw new Error(
      (await res.json().catch(() => ({})))?.error?.message ?? `${res.status} ${res.statusText}`,
    );
  let query;
  await readSse(res, (chunk) => {
    if (!query && chunk.id) {
      query = chunk.id;
      on.query?.(query);
    }
    const delta = chunk.choices?.[0]?.delta?.content;
    if (delta) on.delta(delta);
  });
  return query;
}

/** Stops a turn: the Query is canceled (closing the stream alone leaves it running). */
export async function cancelQuery(name) {
  await api(await nsPath(`queries/${encodeURIComponent(name)}`), {
    method: 'PATCH',
    body: { spec: { cancel: true } },
  });
}

/** The Query's conversation id, once its status has it. */
export async function conversationOf(name) {
  for (let i = 0; i < 20; i++) {
    const q = await api(await nsPath(`queries/${encodeURIComponent(name)}`));
    const id = q?.status?.conversationId ?? q?.spec?.conversationId;
    if (id) return { id, query: q };
    await new Promise((r) => setTimeout(r, 150));
  }
  return undefined;
}
