/**
 * MCPServers: resolves the address (as a Memory's: a URL, or a Service's cluster DNS name), lists
 * the tools on create, on any change (spec, Service, header Secret) and every `discoveryInterval`,
 * and writes phase, revision, tools and conditions. A listing runs off the workers, under its
 * deadline (`spec.timeout` per attempt, `maxRetries`), at most `maxConcurrentRuns` at once: one
 * slow server holds no worker and no other server. Stopping (shutdown, lost lease) aborts them.
 */
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { Kinds, MCP_DEFAULTS, type MCPServer } from '../../api/index.ts';
import { durationField } from '../../engine/duration.ts';
import type { HttpClient } from '../../engine/http.ts';
import { McpClient, McpFailure } from '../../engine/mcp/index.ts';
import { type Client, ignoreNotFound, patchStatus } from '../../kube/client/index.ts';
import type { ReconcileContext, ReconcileResult, Request } from '../../kube/controller.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import type { Logger } from '../../log/index.ts';
import { addressRefers, resolveAddress } from '../address.ts';
import { engineSecretValue } from '../lookup.ts';
import { queueStatusWrite, RUNNING_STATUS_DELAY_MS, Runs } from '../runs/index.ts';
import { RunReconciler } from '../runs/reconciler.ts';
import {
  discoveredStatus,
  discoveringStatus,
  type Outcome,
  statusTools,
  unresolvedStatus,
} from './status.ts';

const SecretRef = CoreKinds.Secret as KindRef<V1Secret>;
const MIN_INTERVAL_MS = 10_000;

export interface McpServerReconcilerOptions {
  /** Discoveries at once; more wait (requeued). Default 64. */
  maxConcurrentRuns?: number;
  /** A failed discovery is tried again after this (or the interval, if shorter). Default 30 s. */
  retryAfterMs?: number;
  /** Retry backoff inside one discovery (tests shorten it). Default 250 ms. */
  retryBaseMs?: number;
}

export interface McpServerReconcilerDeps {
  client: Client;
  http: Pick<HttpClient, 'fetchFor'>;
  watchNamespace?: string;
  logger?: Logger;
}

interface Done {
  uid: string;
  /** What the discovery was of: generation, address and header Secrets' versions. */
  fingerprint: string;
  nextAt: number;
}

type DiscoveryRun = ReturnType<Runs<Outcome>['start']> & { fingerprint?: string; address?: string };

export class McpServerReconciler extends RunReconciler<Outcome> {
  readonly name = 'mcpserver-discoveries';
  private readonly d: McpServerReconcilerDeps;
  private readonly o: Required<McpServerReconcilerOptions>;
  private readonly mcp: McpClient;
  /** The last finished discovery of each server (by namespace/name): when the next one is due. */
  private readonly done = new Map<string, Done>();

  constructor(deps: McpServerReconcilerDeps, opts: McpServerReconcilerOptions = {}) {
    super(new Runs<Outcome>(60_000, 'discovery'), 'MCP discoveries', deps.logger);
    this.d = deps;
    this.o = {
      maxConcurrentRuns: opts.maxConcurrentRuns ?? 64,
      retryAfterMs: opts.retryAfterMs ?? 30_000,
      retryBaseMs: opts.retryBaseMs ?? 250,
    };
    this.mcp = new McpClient(deps.http, { retryBaseMs: this.o.retryBaseMs, toolsTtlMs: 1 });
  }

  /** Servers whose Service or header Secret changed. */
  async requestsFor(kind: 'Service' | 'Secret', obj: KubernetesObject): Promise<Request[]> {
    const namespace = kind === 'Secret' ? obj.metadata?.namespace : this.d.watchNamespace;
    const { items } = await this.d.client.list(Kinds.MCPServer, namespace ? { namespace } : {});
    return items
      .filter((s) => addressRefers(s, kind, obj))
      .map((s) => ({ namespace: s.metadata.namespace ?? '', name: s.metadata.name }));
  }

  protected async reconcileOnce(req: Request, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const s = await ignoreNotFound(this.d.client.get(Kinds.MCPServer, req, { signal: ctx.signal }));
    const stale = this.runs.byRequest(req) as DiscoveryRun | undefined;
    if (stale && stale.uid !== s?.metadata.uid) this.drop(stale);
    if (!s || s.metadata.deletionTimestamp) {
      this.done.delete(`${req.namespace}/${req.name}`);
      return undefined;
    }
    const uid = s.metadata.uid ?? '';
    const now = new Date();
    const resolved = await resolveAddress(
      { reader: this.d.client, watchNamespace: this.d.watchNamespace },
      s,
    );
    if (resolved.phase === 'error' || !resolved.address) {
      const run = this.runs.get(uid);
      if (run) this.drop(run as DiscoveryRun);
      if (s.status?.phase !== 'error' || s.status.message !== resolved.message)
        await this.write(s, unresolvedStatus(s, resolved.reason, resolved.message, now), ctx);
      return undefined; // a Service or Secret change re-enqueues it
    }
    const address = resolved.address;
    const fingerprint = await this.fingerprint(s, address);
    const run = this.runs.get(uid) as DiscoveryRun | undefined;
    if (run && run.fingerprint !== fingerprint)
      this.drop(run); // changed under it: list again
    else if (run?.outcome) return this.finish(s, run, ctx);
    else if (run) return undefined; // its end re-enqueues
    const waitMs = this.dueIn(s, req, fingerprint, address, now);
    if (waitMs > 0) return { requeueAfterMs: waitMs };
    if (this.runs.size >= this.o.maxConcurrentRuns) return { requeueAfterMs: 1000 };
    return this.launch(s, req, address, fingerprint, ctx);
  }

  /** 0 when a discovery is due, else how long until it is. */
  private dueIn(s: MCPServer, req: Request, fingerprint: string, address: string, now: Date): number {
    const last = this.done.get(`${req.namespace}/${req.name}`);
    if (last && last.uid === s.metadata.uid)
      return last.fingerprint === fingerprint ? Math.max(0, last.nextAt - now.getTime()) : 0;
    // After a restart or a new leader: a recent listing of this generation and address still holds.
    const st = s.status;
    const listed = st?.lastDiscoveryTime ? Date.parse(st.lastDiscoveryTime) : Number.NaN;
    if (st?.phase !== 'ready' || st.observedGeneration !== s.metadata.generation) return 0;
    if (st.lastResolvedAddress !== address || Number.isNaN(listed)) return 0;
    return Math.max(0, listed + this.interval(s) - now.getTime());
  }

  private interval(s: MCPServer): number {
    try {
      return Math.max(
        MIN_INTERVAL_MS,
        durationField(s.spec.discoveryInterval, MCP_DEFAULTS.discoveryInterval, 'x'),
      );
    } catch {
      return durationField(MCP_DEFAULTS.discoveryInterval, MCP_DEFAULTS.discoveryInterval, 'x');
    }
  }

  private launch(s: MCPServer, req: Request, address: string, fingerprint: string, ctx: ReconcileContext) {
    const run = this.runs.start(s.metadata.uid ?? '', req) as DiscoveryRun;
    run.fingerprint = fingerprint;
    run.address = address;
    const log = ctx.logger.child({ uid: s.metadata.uid });
    const timer = setTimeout(() => {
      if (!this.runs.isCurrent(run) || run.outcome) return;
      const write = () =>
        this.write(s, discoveringStatus(s, address, new Date()), { signal: run.ctl.signal });
      queueStatusWrite(run, write, log);
    }, RUNNING_STATUS_DELAY_MS);
    void this.discover(s, address, run.ctl.signal).then((outcome) => {
      clearTimeout(timer);
      run.outcome = outcome;
      this.runs.notifyEnded(run);
    });
    return undefined;
  }

  private async discover(s: MCPServer, url: string, signal: AbortSignal): Promise<Outcome> {
    const label = `MCPServer ${s.metadata.namespace}/${s.metadata.name}`;
    try {
      const ep = {
        label,
        url,
        headers: await this.headers(s),
        timeoutMs: durationField(s.spec.timeout, MCP_DEFAULTS.timeout, `${label}: spec.timeout`),
        timeoutText: s.spec.timeout ?? MCP_DEFAULTS.timeout,
        maxRetries: s.spec.maxRetries ?? MCP_DEFAULTS.maxRetries,
      };
      const discovery = await this.mcp.discover(ep, signal);
      const kept = statusTools(discovery);
      if ('reason' in kept) return { ok: false, reason: kept.reason, message: `${label}: ${kept.message}` };
      return { ok: true, discovery, tools: kept.tools };
    } catch (err) {
      if (err instanceof McpFailure) return { ok: false, reason: err.reason, message: err.message };
      return { ok: false, reason: 'DiscoveryFailed', message: `${label}: ${(err as Error).message}` };
    }
  }

  /** Writes a finished discovery's outcome and schedules the next one. */
  private async finish(s: MCPServer, run: DiscoveryRun, ctx: ReconcileContext) {
    await run.statusWrite;
    const outcome = run.outcome as Outcome;
    await this.write(s, discoveredStatus(s, run.address ?? '', outcome, new Date()), ctx);
    this.runs.finish(run.uid);
    const waitMs = outcome.ok ? this.interval(s) : Math.min(this.interval(s), this.o.retryAfterMs);
    this.done.set(`${run.req.namespace}/${run.req.name}`, {
      uid: run.uid,
      fingerprint: run.fingerprint ?? '',
      nextAt: Date.now() + waitMs,
    });
    ctx.logger.info(
      outcome.ok
        ? { tools: outcome.tools.length, protocolVersion: outcome.discovery.protocolVersion }
        : { reason: outcome.reason, message: outcome.message },
      outcome.ok ? 'MCP server tools listed' : 'MCP server discovery failed',
    );
    return { requeueAfterMs: waitMs };
  }

  private drop(run: DiscoveryRun) {
    this.runs.abort(run, 'deleted');
    this.runs.finish(run.uid);
  }

  /** Header values (Secrets read from the cache, opt-in enforced); resolveAddress checked they exist. */
  private async headers(s: MCPServer): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const h of s.spec.headers ?? []) {
      if (h.value !== undefined) out[h.name] = h.value;
      const ref = h.valueFrom?.secretKeyRef;
      if (!ref) continue;
      const secret = await this.d.client.get(SecretRef, {
        namespace: s.metadata.namespace ?? '',
        name: ref.name,
      });
      const v = engineSecretValue(secret, ref.key);
      if (v !== undefined) out[h.name] = v;
    }
    return out;
  }

  /** A change of any of these lists again: generation, address, each header Secret's version. */
  private async fingerprint(s: MCPServer, address: string): Promise<string> {
    const parts = [String(s.metadata.generation ?? 0), address];
    for (const h of s.spec.headers ?? []) {
      const ref = h.valueFrom?.secretKeyRef;
      if (!ref) continue;
      const secret = await ignoreNotFound(
        this.d.client.get(SecretRef, { namespace: s.metadata.namespace ?? '', name: ref.name }),
      );
      parts.push(`${ref.name}@${secret?.metadata?.resourceVersion ?? ''}`);
    }
    return parts.join('|');
  }

  private async write(s: MCPServer, status: Record<string, unknown>, ctx: { signal: AbortSignal }) {
    await ignoreNotFound(patchStatus(this.d.client, Kinds.MCPServer, s, status, { signal: ctx.signal }));
  }
}
