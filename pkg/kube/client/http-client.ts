import type { KubeConfig } from '@kubernetes/client-node';
import { Discovery } from '../discovery.ts';
import { KubeError, type KubeStatus } from '../errors.ts';
import { type KindRef, resourcePath, type Scheme } from '../kinds.ts';
import { rawRequest } from '../raw.ts';
import type {
  ApplyOptions,
  CallOptions,
  Client,
  DeleteOptions,
  Identity,
  ListOptions,
  ObjectKey,
  ObjectLike,
  ObjectList,
  Patch,
  StatusWriter,
  WriteOptions,
} from './types.ts';

const PATCH_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

interface Send {
  method: string;
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  what: string;
}

export interface HttpClientOptions {
  kc: KubeConfig;
  scheme: Scheme;
  identity?: Identity;
  discovery?: Discovery;
  /**
   * Sent as `User-Agent` (default `berth`, see raw.ts). The API server names a write's field manager
   * after what comes before its first `/`, so `managedFields` and audit logs say which part of Berth
   * wrote what ("berth-controller") instead of "unknown".
   */
  userAgent?: string;
}

/**
 * The live client: every call is one request to the API server, sent as raw JSON (client-node's
 * typed serializers drop fields they do not model) over keep-alive connections. Failures are
 * KubeErrors; a network failure is `Unavailable` (503).
 */
export class HttpClient implements Client {
  readonly scheme: Scheme;
  readonly #o: HttpClientOptions;
  readonly #discovery: Discovery;
  readonly #headers: Record<string, string | string[]>;

  constructor(o: HttpClientOptions) {
    this.#o = o;
    this.scheme = o.scheme;
    this.#discovery = o.discovery ?? new Discovery(o.kc);
    this.#headers = {
      ...(o.userAgent ? { 'user-agent': o.userAgent } : {}),
      ...(o.identity ? impersonationHeaders(o.identity) : {}),
    };
  }

  as(identity: Identity): Client {
    return new HttpClient({ ...this.#o, identity, discovery: this.#discovery });
  }

  async resolve(apiVersion: string, kindOrPlural: string): Promise<KindRef | undefined> {
    const known = this.scheme.find(apiVersion, kindOrPlural);
    if (known) return known;
    try {
      return await this.#discovery.resource(apiVersion, kindOrPlural);
    } catch (err) {
      throw KubeError.from(err, `discovery of ${apiVersion}`);
    }
  }

  get<T>(ref: KindRef<T>, key: ObjectKey, opts: CallOptions = {}): Promise<T> {
    return this.#send<T>({ method: 'GET', path: objPath(ref, key), signal: opts.signal, what: 'get' });
  }

  async list<T>(ref: KindRef<T>, opts: ListOptions = {}): Promise<ObjectList<T>> {
    const list = await this.#send<ObjectList<T>>({
      method: 'GET',
      path: resourcePath(ref, opts.namespace),
      query: {
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit === undefined ? undefined : String(opts.limit),
        continue: opts.continue,
      },
      signal: opts.signal,
      what: `list ${ref.plural}`,
    });
    // Items of a LIST carry no kind/apiVersion for built-in types; readers expect whole objects.
    const apiVersion = list.apiVersion;
    for (const item of list.items ?? []) {
      const o = item as ObjectLike;
      o.kind ??= ref.kind;
      o.apiVersion ??= apiVersion;
    }
    list.items ??= [];
    return list;
  }

  create<T>(ref: KindRef<T>, obj: T & ObjectLike, opts: WriteOptions = {}): Promise<T> {
    return this.#send<T>({
      method: 'POST',
      path: resourcePath(ref, obj.metadata?.namespace),
      query: writeQuery(opts),
      body: withType(ref, obj),
      signal: opts.signal,
      what: 'create',
    });
  }

  replace<T>(ref: KindRef<T>, obj: T & ObjectLike, opts: WriteOptions = {}, sub = ''): Promise<T> {
    return this.#send<T>({
      method: 'PUT',
      path: objPath(ref, keyOf(obj)) + sub,
      query: writeQuery(opts),
      body: withType(ref, obj),
      signal: opts.signal,
      what: `replace${sub}`,
    });
  }

  patch<T>(ref: KindRef<T>, key: ObjectKey, patch: Patch, opts: WriteOptions = {}, sub = ''): Promise<T> {
    const apply = patch.type === 'apply' ? patch : undefined;
    return this.#send<T>({
      method: 'PATCH',
      path: objPath(ref, key) + sub,
      query: {
        ...writeQuery({ ...opts, fieldManager: apply?.fieldManager ?? opts.fieldManager }),
        force: apply ? String(apply.force ?? true) : undefined,
      },
      body: apply ? withType(ref, apply.patch) : patch.patch,
      contentType: PATCH_TYPES[patch.type],
      signal: opts.signal,
      what: `patch${sub}`,
    });
  }

  delete<T>(ref: KindRef<T>, key: ObjectKey, opts: DeleteOptions = {}): Promise<T | KubeStatus> {
    const { preconditions, propagationPolicy, gracePeriodSeconds } = opts;
    const hasBody = preconditions || propagationPolicy || gracePeriodSeconds !== undefined;
    return this.#send<T | KubeStatus>({
      method: 'DELETE',
      path: objPath(ref, key),
      query: writeQuery(opts),
      body: hasBody
        ? { kind: 'DeleteOptions', apiVersion: 'v1', preconditions, propagationPolicy, gracePeriodSeconds }
        : undefined,
      signal: opts.signal,
      what: 'delete',
    });
  }

  apply<T>(ref: KindRef<T>, obj: T & ObjectLike, opts: ApplyOptions): Promise<T> {
    const { fieldManager, force, signal } = opts;
    return this.patch(ref, keyOf(obj), { type: 'apply', patch: obj, fieldManager, force }, { signal });
  }

  status(): StatusWriter {
    return {
      patch: (ref, key, patch, opts) => this.patch(ref, key, patch, opts, '/status'),
      replace: (ref, obj, opts) => this.replace(ref, obj, opts, '/status'),
    };
  }

  async #send<T>(s: Send): Promise<T> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(s.query ?? {})) if (v !== undefined && v !== '') q.set(k, v);
    const path = q.size ? `${s.path}?${q}` : s.path;
    const context = `${s.what} ${s.path}`;
    let res: Awaited<ReturnType<typeof rawRequest>>;
    try {
      res = await rawRequest(this.#o.kc, {
        method: s.method,
        path,
        body: s.body,
        contentType: s.contentType,
        headers: this.#headers,
        signal: s.signal,
      });
    } catch (err) {
      if (s.signal?.aborted) throw err; // the caller's own abort, not an API server failure
      // A body this side cannot serialize (a stack overflow) is a bug here, not an outage there.
      if (err instanceof RangeError) throw err;
      throw KubeError.from(err, context);
    }
    if (res.status >= 300) throw KubeError.fromResponse(res.status, res.body, context);
    try {
      return res.json<T>();
    } catch (err) {
      throw new KubeError(
        502,
        'Unknown',
        `${context}: API server answered invalid JSON: ${(err as Error).message}`,
      );
    }
  }
}

export function impersonationHeaders(id: Identity): Record<string, string | string[]> {
  // One header per group: node's http client sends an array as repeated headers (fetch would join them).
  const h: Record<string, string | string[]> = { 'Impersonate-User': id.user };
  if (id.groups?.length) h['Impersonate-Group'] = [...id.groups];
  return h;
}

const keyOf = (o: ObjectLike): ObjectKey => ({
  namespace: o.metadata?.namespace,
  name: o.metadata?.name ?? '',
});

function objPath(ref: KindRef<unknown>, key: ObjectKey): string {
  if (!key.name) throw new KubeError(422, 'Invalid', `${ref.kind}: metadata.name is required`);
  if (ref.namespaced && !key.namespace)
    throw new KubeError(422, 'Invalid', `${ref.kind} ${key.name}: a namespace is required`);
  return resourcePath(ref, key.namespace, key.name);
}

function writeQuery(o: WriteOptions): Record<string, string | undefined> {
  return { dryRun: o.dryRun ? 'All' : undefined, fieldManager: o.fieldManager };
}

function withType<T extends ObjectLike>(ref: KindRef<unknown>, obj: T): T {
  if (obj.apiVersion && obj.kind) return obj;
  const apiVersion = ref.group ? `${ref.group}/${ref.version}` : ref.version;
  return { apiVersion, kind: ref.kind, ...obj };
}
