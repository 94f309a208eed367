/**
 * Client of the memory backend contract (any backend, the broker being one): conversations are created
 * on demand, history is read page by page until `total`, and new messages are appended with the query
 * id and a TTL aligned with the Query's.
 */
import { randomUUID } from 'node:crypto';
import { requestJson, type SendText, type UpstreamCall } from './http.ts';
import { formatBytes, UpstreamError } from './upstream.ts';

/** A message as stored in memory and replayed as history. */
export interface StoredMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  name?: string;
}

interface MessagesPage {
  messages?: unknown[];
  total?: number;
}

const PAGE_SIZE = 500;
/** What one message counts towards the history cap besides its content (its record, its object). */
const MESSAGE_OVERHEAD = 64;
const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** Records are `{role, content}` or wrap it as `{message: {role, content}}` depending on the backend. */
function toStoredMessage(record: unknown): StoredMessage | undefined {
  if (!record || typeof record !== 'object') return undefined;
  const r = record as Record<string, unknown>;
  const m = (r.message && typeof r.message === 'object' ? r.message : r) as Record<string, unknown>;
  if (typeof m.role !== 'string' || !ROLES.has(m.role)) return undefined;
  const content =
    typeof m.content === 'string' ? m.content : m.content == null ? '' : JSON.stringify(m.content);
  const out: StoredMessage = { role: m.role as StoredMessage['role'], content };
  if (typeof m.name === 'string') out.name = m.name;
  return out;
}

/**
 * A write's own Idempotency-Key (one per call, the same on its retries): a broker that honours it
 * stores a write resent after its connection closed once (pkg/broker/idempotency).
 */
const withWriteKey = (headers: Record<string, string>) => ({
  ...headers,
  'idempotency-key': `berth-write-${randomUUID()}`,
});

export class MemoryClient {
  readonly #base: string;
  readonly #headers: Record<string, string>;
  readonly #send: SendText;
  readonly #name: string;
  readonly #call: UpstreamCall;
  readonly #maxHistory: number;

  constructor(opts: {
    name: string;
    address: string;
    headers: Record<string, string>;
    send: SendText;
    /** Characters of history (content plus a little per message) read before the query fails. */
    maxHistory: number;
  }) {
    this.#base = opts.address.replace(/\/+$/, '');
    this.#headers = opts.headers;
    this.#send = opts.send;
    this.#name = opts.name;
    this.#maxHistory = opts.maxHistory;
    // Answers under the memory cap; a redirect to another origin drops every configured header.
    this.#call = { kind: 'memory', configured: Object.keys(opts.headers) };
  }

  async createConversation(signal: AbortSignal): Promise<string> {
    const res = await requestJson<{ conversation_id?: unknown }>(
      this.#send,
      `Memory ${this.#name}: POST /conversations`,
      `${this.#base}/conversations`,
      { method: 'POST', headers: withWriteKey(this.#headers), signal, upstream: this.#call },
    );
    if (typeof res?.conversation_id !== 'string' || !res.conversation_id) {
      throw new Error(`Memory ${this.#name}: POST /conversations returned no conversation_id`);
    }
    return res.conversation_id;
  }

  /**
   * The whole history of a conversation, oldest first; past the history cap the read fails (a
   * backend answering pages forever, or a history no model could take, must not fill the process).
   */
  async readAll(conversationId: string, signal: AbortSignal): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    let offset = 0;
    let size = 0;
    for (;;) {
      const qs = new URLSearchParams({
        conversation_id: conversationId,
        limit: String(PAGE_SIZE),
        offset: String(offset),
      });
      const page = await requestJson<MessagesPage>(
        this.#send,
        `Memory ${this.#name}: GET /messages`,
        `${this.#base}/messages?${qs}`,
        { method: 'GET', headers: this.#headers, signal, upstream: this.#call },
      );
      const records = Array.isArray(page?.messages) ? page.messages : [];
      for (const r of records) {
        const m = toStoredMessage(r);
        if (m) out.push(m);
        size += (m?.content.length ?? 0) + MESSAGE_OVERHEAD;
      }
      if (size > this.#maxHistory)
        throw new UpstreamError(
          `Memory ${this.#name}: the history of conversation ${conversationId} is larger than ${formatBytes(this.#maxHistory)} (ENGINE_MAX_HISTORY_BYTES); it was not read further`,
        );
      // Advance by what came back: a backend may clamp `limit` below what we asked for.
      offset += records.length;
      const total = typeof page?.total === 'number' ? page.total : undefined;
      if (records.length === 0 || (total !== undefined && offset >= total)) return out;
      if (total === undefined && records.length < PAGE_SIZE) return out;
    }
  }

  async append(
    conversationId: string,
    queryId: string,
    messages: StoredMessage[],
    ttlSeconds: number | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const body: Record<string, unknown> = { conversation_id: conversationId, query_id: queryId, messages };
    if (ttlSeconds !== undefined) body.ttl_seconds = ttlSeconds;
    await requestJson(this.#send, `Memory ${this.#name}: POST /messages`, `${this.#base}/messages`, {
      method: 'POST',
      headers: withWriteKey(this.#headers),
      body,
      signal,
      upstream: this.#call,
    });
  }
}
