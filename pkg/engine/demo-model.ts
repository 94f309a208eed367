/**
 * The built-in demo model (`Model spec.type: demo`): a deterministic OpenAI-compatible chat
 * completions endpoint answered inside the engine, so a first run works with no API key, no network,
 * no port and no TLS exception. It is handed to the `openai` SDK as its `fetch`, so a demo query goes
 * through exactly the code a real provider's does: streaming, token usage, tool calls.
 *
 * Behaviour, stable so tests and samples can rely on it:
 * - when the request offers tools, the conversation has no tool result since the last user message,
 *   and the user's text names a tool (its name, or its name with `-`/`_` read as spaces), the model
 *   calls that tool once, with arguments built from its JSON Schema: every string property gets
 *   what follows a colon after the tool's name ("Use word_count: the quick brown fox" → "the quick
 *   brown fox"), else the last capitalised word of the text, else the whole text;
 * - after a tool result it answers with that result;
 * - asked for JSON (`response_format: {type: json_object}`, as the built-in evaluator's judge asks),
 *   it answers a rating `{"score", "reasoning"}`: 1 when the text after `OUTPUT:` in the user's
 *   message is not empty, else 0 — offline judging that is deterministic, not a judgement;
 * - asked for a JSON Schema (`response_format: {type: json_schema}`, an Agent's outputSchema), it
 *   answers a value built from the schema (demo-json.ts), after any tool call it makes first;
 * - otherwise it answers `[demo model] You said: <text>` plus a hint to switch to a real provider.
 * Tokens are counted as whitespace-separated words.
 */

import { sampleOf } from './demo-json.ts';

interface ChatMessage {
  role: string;
  content?: unknown;
}

interface ChatTool {
  type?: string;
  function?: { name?: string; parameters?: { properties?: Record<string, { type?: string }> } };
}

interface ChatRequest {
  model?: string;
  messages?: ChatMessage[];
  tools?: ChatTool[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  response_format?: { type?: string; json_schema?: { schema?: unknown } };
}

export const DEMO_MODEL_NAME = 'berth-demo';

const HINT =
  'This answer comes from the built-in demo model; point the Model at a real provider for real answers.';

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) => (p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : ''))
      .join(' ');
  return '';
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

/** The tool the user's text names, with arguments for it; undefined when no tool call is due. */
function toolCallFor(req: ChatRequest): { name: string; arguments: string } | undefined {
  const messages = req.messages ?? [];
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  if (lastUser < 0 || messages.slice(lastUser).some((m) => m.role === 'tool')) return undefined;
  const said = text(messages[lastUser]?.content);
  const lower = said.toLowerCase();
  for (const t of req.tools ?? []) {
    const name = t.function?.name;
    if (!name) continue;
    const spoken = name.toLowerCase().replace(/[-_]/g, ' ');
    const at = lower.includes(name.toLowerCase()) ? lower.indexOf(name.toLowerCase()) : lower.indexOf(spoken);
    if (at < 0) continue;
    // Text given after the tool's name and a colon ("… word_count: the quick brown fox").
    const colon = said.indexOf(':', at);
    const given = colon >= 0 ? said.slice(colon + 1).trim() : '';
    // A name in the sentence ("… in Paris?"): a capitalised word other than the first.
    const names = said
      .split(/\s+/)
      .slice(1)
      .map((w) => w.replace(/[^\p{L}\p{N}-]/gu, ''))
      .filter((w) => /^\p{Lu}/u.test(w));
    const value = given || (names.at(-1) ?? said);
    const args: Record<string, string> = {};
    for (const [prop, schema] of Object.entries(t.function?.parameters?.properties ?? {}))
      if (!schema?.type || schema.type === 'string') args[prop] = value;
    return { name, arguments: JSON.stringify(args) };
  }
  return undefined;
}

/** JSON mode: a judge's rating (the one JSON the platform asks of a model on its own). */
function ratingFor(said: string): string {
  const output = /OUTPUT:\s*([\s\S]*?)(?:\nCRITERIA:|$)/.exec(said)?.[1]?.trim() ?? '';
  const score = output ? 1 : 0;
  const reasoning = output
    ? '[demo model] the output is not empty (the demo model rates every non-empty output 1)'
    : '[demo model] the output is empty';
  return JSON.stringify({ score, reasoning });
}

function answerFor(req: ChatRequest): string {
  const messages = req.messages ?? [];
  if (req.response_format?.type === 'json_schema')
    return JSON.stringify(sampleOf(req.response_format.json_schema?.schema));
  if (req.response_format?.type === 'json_object' && messages.at(-1)?.role !== 'tool')
    return ratingFor(text(messages.findLast((m) => m.role === 'user')?.content));
  const last = messages.at(-1);
  if (last?.role === 'tool') return `[demo model] The tool answered: ${text(last.content)}`;
  const said = text(messages.findLast((m) => m.role === 'user')?.content).trim();
  return `[demo model] You said: ${said || '(nothing)'}. ${HINT}`;
}

interface Completion {
  content: string;
  call: { name: string; arguments: string } | undefined;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

function completion(req: ChatRequest): Completion {
  const call = toolCallFor(req);
  const content = call ? '' : answerFor(req);
  const prompt = (req.messages ?? []).reduce((n, m) => n + words(text(m.content)), 0);
  const completionTokens = call ? words(call.arguments) + 1 : words(content);
  return {
    content,
    call,
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completionTokens,
      total_tokens: prompt + completionTokens,
    },
  };
}

let counter = 0;

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

function whole(model: string, id: string, c: Completion): Response {
  return json(200, {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: c.call ? null : c.content,
          ...(c.call ? { tool_calls: [{ id: `${id}-call`, type: 'function', function: c.call }] } : {}),
        },
        finish_reason: c.call ? 'tool_calls' : 'stop',
      },
    ],
    usage: c.usage,
  });
}

function streamed(model: string, id: string, c: Completion, usage: boolean): Response {
  const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const frames: unknown[] = [];
  const delta = (d: unknown, finish: string | null = null) =>
    frames.push({ ...base, choices: [{ index: 0, delta: d, finish_reason: finish }] });
  delta({ role: 'assistant', content: '' });
  if (c.call) delta({ tool_calls: [{ index: 0, id: `${id}-call`, type: 'function', function: c.call }] });
  else for (const piece of c.content.match(/\S+\s*/g) ?? []) delta({ content: piece });
  delta({}, c.call ? 'tool_calls' : 'stop');
  if (usage) frames.push({ ...base, choices: [], usage: c.usage });
  const body = `${frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join('')}data: [DONE]\n\n`;
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

/** A `fetch` answering `POST …/chat/completions` like an OpenAI-compatible server would. */
export async function demoFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : String(input));
  init?.signal?.throwIfAborted();
  if (!url.pathname.endsWith('/chat/completions'))
    return json(404, {
      error: { message: `the demo model serves only chat completions, not ${url.pathname}` },
    });
  let req: ChatRequest;
  try {
    req = JSON.parse(typeof init?.body === 'string' ? init.body : await new Response(init?.body).text());
  } catch {
    return json(400, { error: { message: 'request body is not JSON' } });
  }
  const c = completion(req);
  const id = `chatcmpl-demo-${++counter}`;
  const model = req.model ?? DEMO_MODEL_NAME;
  return req.stream
    ? streamed(model, id, c, req.stream_options?.include_usage === true)
    : whole(model, id, c);
}
