/**
 * Evaluator status: the address resolved as a Memory's (address.ts), then checked to answer. An
 * Evaluator is `ready` only when an HTTP request to `{address}/evaluate` gets an answer — any status
 * (the contract's `/evaluate` takes POSTs; a GET answered 404 or 405 still shows a server there);
 * refused, reset, unresolvable or silent for PROBE_TIMEOUT_MS is `error`, reason `Unreachable`.
 * The check repeats — soon while it fails, rarely while it answers — so an evaluator started (or
 * stopped) after its Evaluator shows up in the phase without any change to the object.
 */
import { type Evaluator, Kinds } from '../api/index.ts';
import { describeNetworkError, type EngineFetch } from '../engine/http.ts';
import { type Client, ignoreNotFound, patchStatus } from '../kube/client/index.ts';
import type { ReconcileContext, ReconcileResult, Request } from '../kube/controller.ts';
import { AddressReconciler, addressStatus, type Resolution, resolveAddress } from './address.ts';
import { evaluateUrl } from './evaluation/call.ts';

export const PROBE_TIMEOUT_MS = 3_000;
/** Re-check of an Evaluator that answers (it may go away) and of one that does not (it may come). */
export const RECHECK_READY_MS = 60_000;
export const RECHECK_UNREACHABLE_MS = 10_000;

export interface EvaluatorReconcilerOptions {
  client: Client;
  /** The controller's evaluator HTTP client (guarded connector, caps): the one evaluations use. */
  fetch: EngineFetch;
  watchNamespace?: string;
  probeTimeoutMs?: number;
  recheckReadyMs?: number;
  recheckUnreachableMs?: number;
}

/**
 * Whether `address` answers HTTP. No header of the Evaluator is sent: a 401 is an answer too, and
 * a credential has no business in a reachability check.
 */
export async function probeEvaluator(
  fetch: EngineFetch,
  address: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Resolution> {
  const url = evaluateUrl(address);
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      upstream: { kind: 'evaluator', configured: [] },
    });
    await res.body?.cancel().catch(() => {});
    return { phase: 'ready', address, reason: 'Resolved', message: `address ${address} answers` };
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    const why = timeout.aborted ? `no answer within ${timeoutMs} ms` : describeNetworkError(err);
    return {
      phase: 'error',
      address,
      reason: 'Unreachable',
      message: `address ${address} does not answer: ${why}`,
    };
  }
}

export class EvaluatorReconciler extends AddressReconciler<Evaluator> {
  readonly #o: EvaluatorReconcilerOptions;

  constructor(o: EvaluatorReconcilerOptions) {
    super(o.client, Kinds.Evaluator, o.watchNamespace);
    this.#o = o;
  }

  override async reconcile(req: Request, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const { client, watchNamespace } = this.#o;
    const o = await ignoreNotFound(client.get(Kinds.Evaluator, req, { signal: ctx.signal }));
    if (!o || o.metadata.deletionTimestamp) return undefined;
    let r = await resolveAddress({ reader: client, watchNamespace }, o);
    if (r.phase === 'ready' && r.address)
      r = await probeEvaluator(
        this.#o.fetch,
        r.address,
        this.#o.probeTimeoutMs ?? PROBE_TIMEOUT_MS,
        ctx.signal,
      );
    const status = addressStatus(o, r, new Date());
    if (status) {
      await patchStatus(client, Kinds.Evaluator, o, status, { signal: ctx.signal });
      ctx.logger.info(
        { kind: 'Evaluator', phase: r.phase, address: r.address, reason: r.reason },
        'evaluator checked',
      );
    }
    // Resolution errors (a missing Service or Secret) come back through their watches; reachability
    // has no watch, so it is asked again on a timer.
    if (r.reason === 'Unreachable')
      return { requeueAfterMs: this.#o.recheckUnreachableMs ?? RECHECK_UNREACHABLE_MS };
    if (r.phase === 'ready') return { requeueAfterMs: this.#o.recheckReadyMs ?? RECHECK_READY_MS };
    return undefined;
  }
}
