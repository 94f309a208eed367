/**
 * One Query from start to outcome: input, Memory history, target, Memory append, stream completion,
 * with a root span (one trace per query) and QueryExecution* events. Never throws: every failure is an
 * outcome, and cancellation is told apart from the Query's own timeout.
 */
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { ANNOTATION_STREAMING, type Query } from '../api/index.ts';
import { gateToolTarget, pausedOutcome, resumedChunk } from './approval/pause.ts';
import { beginResume, checkpointOf } from './approval/resume.ts';
import { type Checkpoint, QueryPaused } from './approval/types.ts';
import type { BrokerRoute } from './brokers.ts';
import { ChunkStream } from './chunks.ts';
import type { QueryOutcome, RunContext } from './contract.ts';
import { durationField } from './duration.ts';
import { failedWith, QueryFailure } from './failure.ts';
import { inputPreview, parseInput } from './input.ts';
import { memoryStep, resolveMemory } from './memory.ts';
import type { StoredMessage } from './memory-client.ts';
import { fail } from './run-fail.ts';
import {
  cut,
  type EngineDeps,
  errorMessage,
  recordingLookup,
  type Scope,
  type TargetResult,
  toModelMessages,
} from './scope.ts';
import { runAgent } from './targets/agent.ts';
import { runModelTarget } from './targets/model.ts';
import { runTeam } from './targets/team.ts';
import { requireTool, runToolTarget } from './targets/tool.ts';
import { SEMCONV_SESSION_ATTRIBUTE, SESSION_ATTRIBUTE, startRootSpan } from './tracing.ts';

/** spec.timeout when the Query gives none (the controller's wait for dependencies counts against it). */
export const DEFAULT_TIMEOUT = '5m';
const DEFAULT_TTL = '720h';

function stringData(extra: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined || v === null) continue;
    out[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

function makeScope(
  deps: EngineDeps,
  query: Query,
  signal: AbortSignal,
  deadline: number,
  broker: BrokerRoute | undefined,
): Scope {
  const namespace = query.metadata.namespace ?? 'default';
  const name = query.metadata.name;
  const events = deps.sinks.events(broker);
  const base = {
    queryId: name,
    queryName: name,
    queryNamespace: namespace,
    queryUid: query.metadata.uid ?? '',
    sessionId: query.spec?.sessionId || name,
  };
  const log = deps.logger.child({ query: name, namespace });
  const secrets = new Set<string>();
  const streaming = query.metadata.annotations?.[ANNOTATION_STREAMING] === 'true';
  return {
    deps: {
      ...deps,
      lookup: recordingLookup(deps.lookup, secrets),
      tracer: deps.sinks.tracer(broker),
      events,
    },
    query,
    namespace,
    name,
    broker,
    signal,
    deadline,
    stream: streaming && broker ? new ChunkStream(broker, name, deps.http, log) : undefined,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    secrets,
    log,
    emit(reason, message, extra = {}, warning = false) {
      events?.enqueue(`${namespace}/${name}`, {
        timestamp: new Date().toISOString(),
        eventType: warning ? 'Warning' : 'Normal',
        reason,
        message,
        data: { ...stringData(extra), ...base },
      });
    },
  };
}

async function runTarget(
  scope: Scope,
  parent: typeof ROOT_CONTEXT,
  history: StoredMessage[],
  input: ReturnType<typeof parseInput>,
): Promise<TargetResult> {
  const target = scope.query.spec.target;
  const conversation = toModelMessages([...history, ...input.messages]);
  switch (target?.type) {
    case 'model':
      return runModelTarget(scope, parent, target.name, conversation);
    case 'agent':
      return runAgent(scope, parent, target.name, conversation, 'TargetNotFound');
    case 'team':
      return runTeam(scope, parent, target.name, conversation);
    case 'tool': {
      const tool = requireTool(scope, target.name, `Query ${scope.name}`, 'TargetNotFound');
      const result = await runToolTarget(scope, parent, target.name, gateToolTarget(scope, tool, input.text));
      // A tool answers at once; streaming clients still get it as one chunk.
      scope.stream?.write({
        id: `${scope.name}-tool`,
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model: `tool/${target.name}`,
        choices: [{ index: 0, delta: { role: 'assistant', content: result.content }, finish_reason: 'stop' }],
      });
      return result;
    }
    default:
      throw new QueryFailure(
        'InvalidQuery',
        `spec.target.type must be agent, team, model or tool (got ${JSON.stringify(target?.type)})`,
      );
  }
}

/**
 * The broker of the query's namespace. A router that fails (its API server unreachable) leaves the
 * query without one: the answer still reaches the Query's status and its Memory.
 */
async function routeOf(deps: EngineDeps, query: Query): Promise<BrokerRoute | undefined> {
  const namespace = query.metadata.namespace ?? 'default';
  try {
    return await deps.brokers.route(namespace);
  } catch (err) {
    deps.logger.warn(
      { namespace, query: query.metadata.name, error: errorMessage(err) },
      'no broker for the query: its chunks, events and traces are not recorded',
    );
    return undefined;
  }
}

/** The checkpoint a resumed run starts from; an unusable one fails the run (not the process). */
function resumeOf(query: Query): { checkpoint?: Checkpoint; problem?: unknown } {
  try {
    return { checkpoint: checkpointOf(query) };
  } catch (err) {
    return { problem: err };
  }
}

export async function runQuery(deps: EngineDeps, query: Query, ctx: RunContext): Promise<QueryOutcome> {
  const started = performance.now();
  // A run resumed after a pause (docs/approvals.md): the wait does not count against spec.timeout.
  const resume = resumeOf(query);
  // A fresh run that first waited for its dependencies: that wait does count (RunContext.spentMs).
  const priorMs = resume.checkpoint?.runMs ?? ctx.spentMs ?? 0;
  let timeoutMs: number;
  let timeoutProblem: string | undefined;
  try {
    timeoutMs = Math.max(0, durationField(query.spec?.timeout, DEFAULT_TIMEOUT, 'spec.timeout') - priorMs);
  } catch (err) {
    timeoutMs = 0;
    timeoutProblem = errorMessage(err);
  }
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new Error('query timeout')), timeoutMs);
  const signal = AbortSignal.any([ctx.signal, timeout.signal]);
  const scope = makeScope(deps, query, signal, Date.now() + timeoutMs, await routeOf(deps, query));
  const sessionId = query.spec?.sessionId || scope.name;
  const root = startRootSpan(scope.deps.tracer, 'query', {
    [SESSION_ATTRIBUTE]: sessionId,
    [SEMCONV_SESSION_ATTRIBUTE]: sessionId,
    'berth.query.name': scope.name,
    'berth.query.namespace': scope.namespace,
    'berth.query.uid': query.metadata.uid ?? '',
    'berth.target': `${query.spec?.target?.type}/${query.spec?.target?.name}`,
  });
  const rootCtx = trace.setSpan(ROOT_CONTEXT, root);
  const target = query.spec?.target;
  const resuming = !!resume.checkpoint;
  scope.emit(
    resuming ? 'QueryExecutionResume' : 'QueryExecutionStart',
    `Query ${scope.name} ${resuming ? 'resumed' : 'started'}`,
    {
      targetType: target?.type,
      targetName: target?.name,
      input: cut(inputPreview(query)),
    },
  );
  scope.log.info(
    { target, input: cut(inputPreview(query)), resuming },
    resuming ? 'query resumed' : 'query started',
  );
  let conversationId =
    resume.checkpoint?.conversationId ||
    query.status?.conversationId ||
    query.spec?.conversationId ||
    undefined;
  try {
    if (resume.problem) throw resume.problem;
    if (timeoutProblem) throw new QueryFailure('InvalidQuery', timeoutProblem);
    const { ttlSeconds, input } = checkedSpec(query);
    if (resume.checkpoint) {
      // Canceled while it waited: nothing of the paused turn runs.
      signal.throwIfAborted();
      Object.assign(scope.usage, resume.checkpoint.usage);
      beginResume(scope, resume.checkpoint);
      resumedChunk(scope);
    }
    const memory = resolveMemory(scope);
    let history: StoredMessage[] = [];
    if (memory && !conversationId) {
      conversationId = await memoryStep(scope, rootCtx, 'MemoryCreateConversation', memory.name, {}, () =>
        memory.client.createConversation(signal),
      );
    } else if (memory && conversationId) {
      const id = conversationId;
      history = await memoryStep(
        scope,
        rootCtx,
        'MemoryGetMessages',
        memory.name,
        { conversationId: id },
        () => memory.client.readAll(id, signal),
        (h) => ({ messages: h.length }),
      );
    }
    if (conversationId) ctx.onConversation?.(conversationId);
    const result = await runTarget(scope, rootCtx, history, input);
    if (memory && conversationId) {
      const id = conversationId;
      const messages = [...input.messages, ...result.produced];
      await memoryStep(
        scope,
        rootCtx,
        'MemoryAddMessages',
        memory.name,
        { conversationId: id, messages: messages.length },
        () => memory.client.append(id, scope.name, messages, ttlSeconds, signal),
      );
    }
    await scope.stream?.complete();
    const durationMs = Math.round(performance.now() - started);
    scope.emit('QueryExecutionComplete', `Query ${scope.name} done`, {
      ...scope.usage,
      durationMs,
      conversationId,
      output: cut(result.content),
    });
    scope.log.info(
      { durationMs, output: cut(result.content), tokens: scope.usage.totalTokens },
      'query done',
    );
    root.setStatus({ code: SpanStatusCode.OK });
    return {
      phase: 'done',
      reason: 'Succeeded',
      content: result.content,
      tokenUsage: { ...scope.usage },
      conversationId,
    };
  } catch (thrown) {
    let err = thrown;
    if (err instanceof QueryPaused && !signal.aborted) {
      try {
        const runMs = priorMs + performance.now() - started;
        const paused = await pausedOutcome(scope, err, { runMs, conversationId });
        root.setAttribute('berth.query.paused', true);
        root.setStatus({ code: SpanStatusCode.OK });
        return paused;
      } catch (tooLarge) {
        err = tooLarge; // the checkpoint cannot be kept: the run fails instead
      }
    }
    return await fail(scope, err, {
      ctx,
      timedOut: timeout.signal.aborted,
      timeoutText: query.spec?.timeout ?? DEFAULT_TIMEOUT,
      conversationId,
      root,
      started,
    });
  } finally {
    clearTimeout(timer);
    root.end();
    // Its last event goes out now rather than after the linger, so it is stored by the time the
    // Query's status says the run ended.
    scope.deps.events?.sendNow(`${scope.namespace}/${scope.name}`);
  }
}

/** What the run needs from the spec besides the target; a spec that does not parse is InvalidQuery. */
function checkedSpec(query: Query) {
  try {
    const ttlSeconds = Math.round(durationField(query.spec.ttl, DEFAULT_TTL, 'spec.ttl') / 1000);
    return { ttlSeconds, input: parseInput(query) };
  } catch (err) {
    throw failedWith('InvalidQuery', err);
  }
}
