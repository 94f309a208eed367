/** What every step of one query's execution shares: dependencies, cancellation, deadline, accounting. */
import type { Tracer } from '@opentelemetry/api';
import type { Query, TokenUsage } from '../api/index.ts';
import { type Logger, truncateForLog } from '../log/index.ts';
import type { BrokerSinks } from './broker-sinks.ts';
import type { BrokerRoute, BrokerRouter } from './brokers.ts';
import type { ChunkStream } from './chunks.ts';
import type { ResourceLookup } from './contract.ts';
import type { EventQueue } from './event-queue.ts';
import type { HttpClient } from './http.ts';
import type { McpClient } from './mcp/index.ts';
import type { StoredMessage } from './memory-client.ts';
import type { ChatCompletionMessageParam, ModelClients } from './model-client.ts';

export interface EngineDeps {
  lookup: ResourceLookup;
  http: HttpClient;
  models: ModelClients;
  /** Discovery and tool calls of MCP servers (the SDKs load at first use). */
  mcp: McpClient;
  brokers: BrokerRouter;
  sinks: BrokerSinks;
  logger: Logger;
}

/** The deps of one query: its broker's tracer and event queue chosen. */
export interface ScopeDeps extends EngineDeps {
  tracer: Tracer;
  events: EventQueue | undefined;
}

export interface Scope {
  deps: ScopeDeps;
  query: Query;
  namespace: string;
  name: string;
  /** The broker of the query's namespace (chunks, events, traces; a memory call to it carries its credential). */
  broker: BrokerRoute | undefined;
  /** Aborted on cancellation or when the Query's timeout expires. */
  signal: AbortSignal;
  /** Epoch ms by which the query must be done (spec.timeout). */
  deadline: number;
  stream: ChunkStream | undefined;
  /** Summed over every model call of the query. */
  usage: TokenUsage;
  /**
   * Every Secret value this query's calls were given (keys, header values): scrubbed from what an
   * upstream says back before it becomes the Query's status, events or the compat API's error.
   */
  secrets: Set<string>;
  log: Logger;
  emit(reason: string, message: string, extra?: Record<string, unknown>, warning?: boolean): void;
}

/** What a target produced: the answer and the messages to append to memory after the input. */
export interface TargetResult {
  content: string;
  produced: StoredMessage[];
}

/** Event data carries input/output text cut to 48 characters (47 + the ellipsis of truncateForLog). */
export function cut(text: string): string {
  return truncateForLog(text, 47) ?? '';
}

export function addUsage(into: TokenUsage, u: TokenUsage): void {
  into.promptTokens += u.promptTokens;
  into.completionTokens += u.completionTokens;
  into.totalTokens += u.totalTokens;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * History and input as model messages. Stored `tool` messages cannot be replayed: a tool message is only
 * valid right after the assistant message that requested it, which memory does not keep.
 */
export function toModelMessages(messages: StoredMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  for (const m of messages) {
    if (m.role === 'tool') continue;
    const msg: Record<string, string> = { role: m.role, content: m.content };
    if (m.name && m.role !== 'system') msg.name = sanitizeName(m.name);
    out.push(msg as unknown as ChatCompletionMessageParam);
  }
  return out;
}

/** OpenAI accepts `^[a-zA-Z0-9_-]{1,64}$` for function and participant names; Kubernetes names may hold dots. */
export function sanitizeName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
}

/** `lookup`, remembering into `seen` every Secret value it hands out. */
export function recordingLookup(lookup: ResourceLookup, seen: Set<string>): ResourceLookup {
  return {
    agent: (ns, name) => lookup.agent(ns, name),
    team: (ns, name) => lookup.team(ns, name),
    model: (ns, name) => lookup.model(ns, name),
    tool: (ns, name) => lookup.tool(ns, name),
    memory: (ns, name) => lookup.memory(ns, name),
    mcpServer: (ns, name) => lookup.mcpServer?.(ns, name),
    secretValue: (ns, name, key) => {
      const v = lookup.secretValue(ns, name, key);
      if (v !== undefined) seen.add(v);
      return v;
    },
  };
}
