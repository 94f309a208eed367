/**
 * A resumed run: the frames of the checkpoint, taken one per target level on the way down, and the
 * decisions recorded on the Query. Kept beside the Scope (not in it): only the targets that can
 * pause look at it.
 */
import type { ApprovalDecision, Query } from '../../api/index.ts';
import { QueryFailure } from '../failure.ts';
import type { Scope } from '../scope.ts';
import { CHECKPOINT_VERSION, type Checkpoint, type Frame } from './types.ts';

export interface ResumeState {
  checkpoint: Checkpoint;
  frames: Frame[];
  decisions: Map<string, ApprovalDecision>;
}

const states = new WeakMap<Scope, ResumeState>();

/** The checkpoint of a Query the controller resumes (phase was input-required), else undefined. */
export function checkpointOf(query: Query): Checkpoint | undefined {
  const raw = query.status?.checkpoint as Partial<Checkpoint> | undefined;
  if (!raw) return undefined;
  if (raw.v !== CHECKPOINT_VERSION || !Array.isArray(raw.frames) || raw.frames.length === 0)
    throw new QueryFailure(
      'Failed',
      `status.checkpoint is not one this engine can resume (version ${JSON.stringify(raw.v)})`,
    );
  return {
    v: raw.v,
    runMs: typeof raw.runMs === 'number' ? raw.runMs : 0,
    usage: raw.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    conversationId: typeof raw.conversationId === 'string' ? raw.conversationId : undefined,
    frames: raw.frames as Frame[],
  };
}

export function beginResume(scope: Scope, checkpoint: Checkpoint): ResumeState {
  const decisions = new Map<string, ApprovalDecision>();
  for (const d of scope.query.status?.approvals ?? []) if (!decisions.has(d.id)) decisions.set(d.id, d);
  const state = { checkpoint, frames: [...checkpoint.frames], decisions };
  states.set(scope, state);
  return state;
}

/**
 * The next frame when it is of `kind` and `name` (this target paused); undefined when the run is
 * not resuming. A frame of another target means the Team or Agent changed while the query waited.
 */
export function takeFrame<K extends Frame['kind']>(
  scope: Scope,
  kind: K,
  name: string,
): Extract<Frame, { kind: K }> | undefined {
  const state = states.get(scope);
  const next = state?.frames[0];
  if (!state || !next) return undefined;
  if (next.kind !== kind || next.name !== name)
    throw new QueryFailure(
      'Failed',
      `cannot resume: the query paused in ${next.kind} ${next.name}, but ${kind} ${name} runs at that point now (was a Team or Agent changed while it waited?)`,
    );
  state.frames.shift();
  return next as Extract<Frame, { kind: K }>;
}

/** The decision on a pending approval of the checkpoint (the controller resumes only when all have one). */
export function decisionOf(scope: Scope, approvalId: string): ApprovalDecision {
  const d = states.get(scope)?.decisions.get(approvalId);
  if (!d) throw new QueryFailure('Failed', `cannot resume: no decision recorded for approval ${approvalId}`);
  return d;
}
