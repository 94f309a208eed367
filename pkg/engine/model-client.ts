/**
 * Chat completions against OpenAI-compatible endpoints through the `openai` SDK (its retries on 429,
 * 5xx and connection errors honour `retry-after`), over the engine's shared HTTP client so extra CAs
 * and keep-alive apply. Clients are cached per Model generation and key.
 */
import { createHash } from 'node:crypto';
import OpenAI, { AzureOpenAI } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { Model, TokenUsage } from '../api/index.ts';
import type { ResourceLookup } from './contract.ts';
import { demoFetch } from './demo-model.ts';
import { lookupSecret, resolveHeaders } from './headers.ts';
import { type HttpClient, modelUrlProblem } from './http.ts';

export type { ChatCompletionMessageParam, ChatCompletionTool };

export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

export interface ModelAnswer {
  content: string;
  toolCalls: ToolCallRequest[];
  usage: TokenUsage;
  finishReason: string;
}

export interface ModelCall {
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  /** OpenAI `response_format` (structured answers: pkg/engine/structured.ts). */
  responseFormat?: Record<string, unknown>;
  signal: AbortSignal;
  timeoutMs: number;
  /** Streaming mode: called with each chunk as it arrives. */
  onChunk?: (chunk: ChatCompletionChunk) => void;
}

const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/** The demo model's client: the real SDK over an in-process fetch (no port, no network, no key). */
const DEMO_CLIENT = new OpenAI({
  apiKey: 'demo',
  baseURL: 'http://demo.invalid/v1',
  maxRetries: 0,
  fetch: demoFetch as unknown as typeof globalThis.fetch,
});
const CACHE_LIMIT = 256;

export class ModelClients {
  readonly #http: HttpClient;
  readonly #lookup: ResourceLookup;
  readonly #maxRetries: number;
  readonly #cache = new Map<string, OpenAI>();

  constructor(http: HttpClient, lookup: ResourceLookup, maxRetries: number) {
    // Every SDK call is a model call: its answers get the model cap, its redirects the model rule
    // (same origin only, never https → http: the key is in its headers).
    this.#http = { ...http, fetch: http.fetchFor({ kind: 'model' }) };
    this.#lookup = lookup;
    this.#maxRetries = maxRetries;
  }

  /** The SDK client of a Model; throws a message naming the Model when it cannot be used. */
  client(model: Model, lookup: ResourceLookup = this.#lookup): OpenAI {
    if (model.spec.type === 'demo') return DEMO_CLIENT;
    const ns = model.metadata.namespace ?? 'default';
    const owner = `Model ${model.metadata.name}`;
    const problem = modelUrlProblem(model.spec.baseUrl ?? '');
    if (problem) throw new Error(`${owner}: ${problem}`);
    let apiKey = 'unused';
    const ref = model.spec.apiKey?.secretKeyRef;
    if (ref) {
      const v = lookupSecret(lookup, ns, ref, `${owner}: API key`);
      if (v === undefined)
        throw new Error(`${owner}: API key Secret ${ref.name} key ${ref.key} does not exist`);
      apiKey = v;
    }
    const headers = resolveHeaders(model.spec.headers, ns, lookup, owner);
    const key = createHash('sha256')
      .update(JSON.stringify([ns, model.metadata.name, model.spec, apiKey, headers]))
      .digest('hex');
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const common = {
      apiKey,
      defaultHeaders: headers,
      maxRetries: this.#maxRetries,
      fetch: this.#http.fetch as unknown as typeof globalThis.fetch,
    };
    const client =
      model.spec.type === 'azure'
        ? new AzureOpenAI({
            ...common,
            endpoint: model.spec.baseUrl,
            deployment: model.spec.model,
            apiVersion: model.spec.apiVersion ?? DEFAULT_AZURE_API_VERSION,
          })
        : new OpenAI({ ...common, baseURL: model.spec.baseUrl });
    if (this.#cache.size >= CACHE_LIMIT) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(key, client);
    return client;
  }
}

function usageOf(
  u: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null | undefined,
): TokenUsage {
  const promptTokens = u?.prompt_tokens ?? 0;
  const completionTokens = u?.completion_tokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: u?.total_tokens ?? promptTokens + completionTokens };
}

/** One chat completion, streamed or not; the answer is the same shape either way. */
export async function complete(client: OpenAI, model: string, call: ModelCall): Promise<ModelAnswer> {
  const base = {
    model,
    messages: call.messages,
    ...(call.tools?.length ? { tools: call.tools } : {}),
    // Passed as given: the SDK's type names the shapes OpenAI documents, a caller's may be newer.
    ...(call.responseFormat ? { response_format: call.responseFormat as { type: 'json_object' } } : {}),
  };
  const options = { signal: call.signal, timeout: Math.max(1, call.timeoutMs) };
  if (!call.onChunk) {
    const res = await client.chat.completions.create({ ...base, stream: false }, options);
    const choice = res.choices[0];
    const toolCalls: ToolCallRequest[] = [];
    for (const tc of choice?.message.tool_calls ?? []) {
      if (tc.type === 'function')
        toolCalls.push({ id: tc.id, name: tc.function.name, arguments: tc.function.arguments });
    }
    return {
      content: choice?.message.content ?? '',
      toolCalls,
      usage: usageOf(res.usage),
      finishReason: choice?.finish_reason ?? 'stop',
    };
  }
  const stream = await client.chat.completions.create(
    { ...base, stream: true, stream_options: { include_usage: true } },
    options,
  );
  let content = '';
  let finishReason = 'stop';
  let usage: TokenUsage = usageOf(undefined);
  const calls = new Map<number, ToolCallRequest>();
  for await (const chunk of stream) {
    if (chunk.usage) usage = usageOf(chunk.usage);
    const choice = chunk.choices[0];
    if (choice?.finish_reason) finishReason = choice.finish_reason;
    const delta = choice?.delta;
    if (delta?.content) content += delta.content;
    for (const tc of delta?.tool_calls ?? []) {
      const cur = calls.get(tc.index) ?? { id: '', name: '', arguments: '' };
      if (tc.id) cur.id = tc.id;
      if (tc.function?.name) cur.name += tc.function.name;
      if (tc.function?.arguments) cur.arguments += tc.function.arguments;
      calls.set(tc.index, cur);
    }
    call.onChunk(chunk);
  }
  return { content, toolCalls: [...calls.values()], usage, finishReason };
}
