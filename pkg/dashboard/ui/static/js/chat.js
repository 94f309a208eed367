import { $, api, base, h, mode, setStatus, signIn } from './lib.js';

// A chat over /compat/v1: the conversation lives in this page only (no memory, nothing stored) and
// the whole history goes with each request; the answer streams in token by token.

const messages = [];
const log = $('#messages');
const form = $('#chat-form');
const target = $('#target');

function bubble(role, text) {
  const el = h('li', { class: role, dataset: { role } }, text);
  log.append(el);
  return el;
}

async function targets() {
  try {
    const { data = [] } = (await api('/compat/v1/models')) ?? {};
    target.replaceChildren(...data.map((m) => h('option', { value: m.id }, m.id)));
    setStatus('chat-status', data.length ? '' : 'No agents, teams, models or tools in this namespace.');
  } catch (err) {
    setStatus('chat-status', err.message, 'error');
  }
}

/** Reads an OpenAI-style SSE body, calling `onDelta` with each piece of content. */
async function readStream(res, onDelta) {
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
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message ?? 'the stream failed');
      const delta = chunk.choices?.[0]?.delta?.content;
      if (delta) onDelta(delta);
    }
  }
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const content = form.elements.content.value.trim();
  if (!content || !target.value) return;
  messages.push({ role: 'user', content });
  bubble('user', content);
  form.reset();
  const answer = bubble('assistant', '');
  const send = form.querySelector('button');
  send.disabled = true;
  setStatus('chat-status', 'Thinking…');
  try {
    const res = await fetch(`${base}/api/compat/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      credentials: 'same-origin',
      body: JSON.stringify({ model: target.value, messages, stream: true }),
    });
    if (res.status === 401 && (mode === 'sso' || mode === 'hybrid')) signIn();
    if (!res.ok)
      throw new Error(
        (await res.json().catch(() => ({})))?.error?.message ?? `${res.status} ${res.statusText}`,
      );
    await readStream(res, (delta) => {
      answer.textContent += delta;
    });
    messages.push({ role: 'assistant', content: answer.textContent });
    setStatus('chat-status', '');
  } catch (err) {
    // The failed turn leaves the history, so the next message is not sent after an unanswered one.
    messages.pop();
    answer.classList.add('failed');
    setStatus('chat-status', err.message, 'error');
  } finally {
    send.disabled = false;
  }
});

await targets();
document.body.dataset.ready = 'true';
