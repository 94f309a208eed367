/**
 * What a paused query keeps (docs/approvals.md, "Durability"): one frame per target level from the
 * query's own target down to the agent whose model asked, enough to continue exactly where it
 * stopped. Stored as JSON on the Query (`status.checkpoint`), versioned.
 */
import type { PendingApproval, TokenUsage } from '../../api/index.ts';
import type { StoredMessage } from '../memory-client.ts';
import type { ChatCompletionMessageParam } from '../model-client.ts';

export const CHECKPOINT_VERSION = 1;

/** An approval policy with every field decided (the Agent's entry, then the Tool's, then defaults). */
export interface ResolvedApproval {
  required: boolean;
  timeout: string;
  timeoutMs: number;
  onTimeout: 'reject' | 'proceed';
  approvers?: string[];
}

/** One tool call of the turn that paused: its result once known, else the approval it waits for. */
export interface CallState {
  /** The model's tool_call id. */
  id: string;
  /** The function the model called. */
  name: string;
  /** Its arguments as the model wrote them. */
  arguments: string;
  result?: string;
  approvalId?: string;
}

export interface TeamFrame {
  kind: 'team';
  name: string;
  /** The turn (0-based) whose member paused. */
  turn: number;
  produced: StoredMessage[];
  content: string;
}

export interface AgentFrame {
  kind: 'agent';
  name: string;
  /** The model turn (1-based) whose tool calls paused. */
  turn: number;
  /** Whether the one repair round of a structured answer was used. */
  repaired: boolean;
  /** The conversation so far: system prompt, history, input, turns, the assistant's tool calls last. */
  messages: ChatCompletionMessageParam[];
  calls: CallState[];
}

/** A `tool/<name>` query whose Tool needs approval. */
export interface ToolFrame {
  kind: 'tool';
  name: string;
  input: string;
  approvalId: string;
}

export type Frame = TeamFrame | AgentFrame | ToolFrame;

export interface Checkpoint {
  v: number;
  /** Running time used so far (the wait does not count against spec.timeout). */
  runMs: number;
  usage: TokenUsage;
  conversationId?: string;
  /** Outermost first. */
  frames: Frame[];
}

/**
 * Thrown where a call must wait: each enclosing target adds its frame on the way up (team frames
 * before the agent's), and the run turns it into an `input-required` outcome.
 */
export class QueryPaused extends Error {
  override name = 'QueryPaused';
  readonly pending: PendingApproval[];
  readonly frames: Frame[];

  constructor(pending: PendingApproval[], frame: Frame) {
    super(`waiting for ${pending.length} decision(s)`);
    this.pending = pending;
    this.frames = [frame];
  }
}
