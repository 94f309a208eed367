/**
 * The seam between the controller's Query reconciler and the query engine. The reconciler owns the
 * Query object (finalizer, phase transitions, status writes, cancellation); the engine runs one
 * Query to an outcome and records what it produces in the broker and the Memory.
 */
import type { Query, QueryEndReason, TokenUsage } from '../api/index.ts';
import type { Agent } from '../api/kinds/agent.ts';
import type { MCPServer } from '../api/kinds/mcpserver.ts';
import type { Memory } from '../api/kinds/memory.ts';
import type { Model } from '../api/kinds/model.ts';
import type { Team } from '../api/kinds/team.ts';
import type { Tool } from '../api/kinds/tool.ts';
import type { PausedOutcome } from './approval/pause.ts';
import type { Unresolved } from './readiness.ts';

/** Read access to the objects a query needs, served from the informer caches (never per-call GETs). */
export interface ResourceLookup {
  agent(namespace: string, name: string): Agent | undefined;
  team(namespace: string, name: string): Team | undefined;
  model(namespace: string, name: string): Model | undefined;
  tool(namespace: string, name: string): Tool | undefined;
  memory(namespace: string, name: string): Memory | undefined;
  /** An MCPServer; a lookup without it knows none (every MCP tool then fails as not found). */
  mcpServer?(namespace: string, name: string): MCPServer | undefined;
  /**
   * Decoded value of one key of a Secret, or undefined when the Secret or key is missing. Throws an
   * Error saying why (never the value) when the Secret is not usable by the engine: it must carry
   * the label `berth.dev/usage: engine` and be neither an API-key nor a marketplace credential.
   */
  secretValue(namespace: string, name: string, key: string): string | undefined;
}

/**
 * How a run ended. `reason` is the `Completed` condition's reason (pkg/api QUERY_END_REASONS); the
 * engine always sets it, other producers may leave it to the phase (error → Failed).
 */
export type QueryOutcome =
  | {
      phase: 'done';
      reason?: 'Succeeded';
      content: string;
      tokenUsage: TokenUsage;
      /** The conversation the messages were stored in (created when the Query named none). */
      conversationId?: string;
    }
  | {
      phase: 'error';
      reason?: QueryEndReason;
      message: string;
      conversationId?: string;
      tokenUsage?: TokenUsage;
    }
  | { phase: 'canceled'; reason?: 'Canceled'; message: string; conversationId?: string }
  /** Waiting for human decisions (docs/approvals.md): the controller writes phase input-required. */
  | PausedOutcome;

export interface RunContext {
  /** Aborted when the Query is canceled (`spec.cancel: true`), deleted, or the process stops. */
  signal: AbortSignal;
  /** Called as soon as the conversation id is known, so status can show it while the query runs. */
  onConversation?: (conversationId: string) => void;
  /**
   * Time of spec.timeout already spent before the run (the Query waited for its Memory or an
   * MCPServer to be resolved): the run gets what remains, so the whole wait for an answer stays
   * within spec.timeout.
   */
  spentMs?: number;
}

export interface QueryEngine {
  /** Runs the Query to an outcome. Never throws for query-level failures: they are an `error` outcome. */
  run(query: Query, ctx: RunContext): Promise<QueryOutcome>;
  /**
   * What the Query waits for before it can run (an object that exists but is not resolved yet:
   * pkg/engine/readiness.ts), else undefined. An engine without it never makes a Query wait.
   */
  waitsFor?(query: Query): Unresolved | undefined;
}
