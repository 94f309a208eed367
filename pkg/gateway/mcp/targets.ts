/**
 * What Berth's `/mcp` tools do, whichever protocol revision asked: `list_targets` lists the ids
 * `/compat/v1/models` lists, `invoke_target` runs one as a Query built the way `/compat/v1` builds
 * it and answers its result text. Protocol-neutral: tools-modern.ts and tools-legacy.ts register
 * these with the two SDKs.
 */
import { randomBytes } from 'node:crypto';
import { Kinds, type Query, TERMINAL_PHASES } from '../../api/index.ts';
import { linkSignals } from '../../http/index.ts';
import { ignoreNotFound } from '../../kube/client/helpers.ts';
import { chunkOfData, openBrokerStream } from '../compat/broker-stream.ts';
import { endOf } from '../compat/end-answers.ts';
import { listTargetItems, TARGET_KINDS } from '../compat/models.ts';
import { buildQuery, parseTarget } from '../compat/query-factory.ts';
import type { GatewayDeps } from '../deps.ts';

/** A failure the caller's model should read: answered as a tool result with `isError: true`. */
export class ToolFailure extends Error {
  override name = 'ToolFailure';
}

export interface InvokeArgs {
  target: string;
  input: string;
  sessionId?: string;
}

export interface InvokeOptions {
  /** The MCP request's signal: aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
  /** How long to wait for the Query's end (the /compat/v1 wait, COMPAT_WAIT_TIMEOUT_SECONDS). */
  waitTimeoutMs: number;
  /** Called per streamed piece of the answer (n counts up from 1) when the client asked for progress. */
  progress?: (n: number, text: string) => Promise<void>;
}

export interface Invoked {
  query: string;
  text: string;
}

const terminal: ReadonlySet<string | undefined> = new Set(TERMINAL_PHASES);
const isFinished = (q: unknown) => terminal.has((q as Query | undefined)?.status?.phase);
/** A progress message carries at most this much of a streamed piece. */
const PROGRESS_TEXT_MAX = 1000;
/** How long the answer waits for the last progress notifications after the Query ended. */
const PROGRESS_DRAIN_MS = 1000;

export async function listTargets(deps: GatewayDeps): Promise<string[]> {
  return (await listTargetItems(deps)).map((item) => item.id);
}

/** The Query of one call, named `mcp-query-<hex>`; streaming when progress is wanted (chunks go to the broker). */
function queryFor(args: InvokeArgs, namespace: string, stream: boolean): Query {
  const query = buildQuery(
    {
      model: args.target,
      messages: [{ role: 'user', content: args.input }],
      stream,
      ...(args.sessionId ? { metadata: { sessionId: args.sessionId } } : {}),
    },
    namespace,
  );
  query.metadata.name = `mcp-query-${randomBytes(5).toString('hex')}`;
  return query;
}

export async function invokeTarget(
  deps: GatewayDeps,
  args: InvokeArgs,
  opts: InvokeOptions,
): Promise<Invoked> {
  let target: ReturnType<typeof parseTarget>;
  try {
    target = parseTarget(args.target);
  } catch (err) {
    throw new ToolFailure(`target: ${(err as Error).message.replace(/^model/, 'target')}`);
  }
  const key = { namespace: deps.namespace, name: target.name };
  if (!(await ignoreNotFound(deps.client.get(TARGET_KINDS[target.type], key))))
    throw new ToolFailure(`target ${args.target} does not exist in namespace ${deps.namespace}`);
  const wanted = queryFor(args, deps.namespace, !!opts.progress && !!deps.brokerUrl);
  let query: Query;
  try {
    query = await deps.client.create(Kinds.Query, wanted);
  } catch (err) {
    throw new ToolFailure(`the query could not be created: ${(err as Error).message}`);
  }
  const name = query.metadata.name;
  const linked = linkSignals(opts.signal, deps.shutdown);
  const stopRelay = new AbortController();
  const relay =
    opts.progress && deps.brokerUrl
      ? relayProgress(deps.brokerUrl, name, linkSignals(linked.signal, stopRelay.signal), opts.progress)
      : Promise.resolve();
  try {
    const done = await deps.cache
      .waitFor(Kinds.Query, deps.namespace, name, isFinished, {
        timeoutMs: opts.waitTimeoutMs,
        signal: linked.signal,
      })
      .catch((err: Error) => waitFailed(deps, name, opts, err));
    const end = endOf(done as Query);
    if (end.reason !== 'Succeeded')
      throw new ToolFailure(`query ${name} ended with ${end.reason}: ${end.message}`);
    // The engine ends the chunk stream just before the outcome: the last pieces are on their way.
    await Promise.race([relay, new Promise((r) => setTimeout(r, PROGRESS_DRAIN_MS).unref())]);
    return { query: name, text: end.query?.status?.response?.content ?? '' };
  } finally {
    stopRelay.abort();
    linked.dispose();
  }
}

/**
 * Why the wait ended without the Query's end. A shutdown (whose grace period is over: sessions and
 * requests are closed with it, aborting their signals too) leaves the Query running and says where
 * to find it. A call the client cancelled or left — or whose session was closed — cancels its
 * Query too (nobody will read the answer) and rethrows, so the SDK answers nothing. A wait that
 * ran out leaves the Query running.
 */
async function waitFailed(deps: GatewayDeps, name: string, opts: InvokeOptions, err: Error): Promise<never> {
  if (deps.shutdown?.aborted)
    throw new ToolFailure(
      `the API service is shutting down; query ${name} goes on (kubectl get query ${name})`,
    );
  if (opts.signal.aborted) {
    const cancel = { type: 'merge' as const, patch: { spec: { cancel: true } } };
    await deps.client
      .patch(Kinds.Query, { namespace: deps.namespace, name }, cancel)
      .catch((e: Error) => deps.logger.warn({ query: name, err: e.message }, 'could not cancel the query'));
    deps.logger.info({ query: name }, 'MCP call cancelled: query canceled');
    throw opts.signal.reason ?? err;
  }
  throw new ToolFailure(`query ${name} did not finish within ${opts.waitTimeoutMs} ms: ${err.message}`);
}

/**
 * Each streamed piece of the answer as a progress notification, from the broker's chunk stream.
 * Best effort: the answer itself comes from the Query, so a broken stream only ends the progress.
 */
async function relayProgress(
  brokerUrl: string,
  name: string,
  linked: ReturnType<typeof linkSignals>,
  progress: NonNullable<InvokeOptions['progress']>,
): Promise<void> {
  let n = 0;
  try {
    for await (const data of await openBrokerStream(brokerUrl, name, linked.signal)) {
      if (data === '[DONE]') return;
      const text = chunkOfData(data).choices?.[0]?.delta?.content;
      if (text) await progress(++n, text.slice(0, PROGRESS_TEXT_MAX));
    }
  } catch {
    // the stream broke or was stopped: progress ends, the Query's outcome still answers
  } finally {
    linked.dispose();
  }
}
