import { randomUUID } from 'node:crypto';
import { KubeError, type KubeStatus } from '../errors.ts';
import { apiVersionOf, type KindRef, refKey, Scheme } from '../kinds.ts';

export type { FakeAction, FakeClientOptions } from './fake-state.ts';

import { type FakeAction, type FakeClientOptions, gone, type Obj, type State } from './fake-state.ts';
import { jsonPatch, mergePatch } from './patch.ts';
import { matchesLabels } from './selectors.ts';
import type * as T from './types.ts';

/**
 * An in-memory client with the API server's semantics that reconcilers rely on: resourceVersion
 * bumps on every write, conditional writes answer 409, create of an existing name 409
 * AlreadyExists, finalizers hold a deleted object (deletionTimestamp set) until the last one is
 * removed, status is a subresource of custom kinds. Server-side apply is approximated by a merge.
 */
export class FakeClient implements T.Client {
  readonly scheme: Scheme;
  readonly #o: FakeClientOptions;
  readonly #s: State;
  readonly #identity: T.Identity | undefined;

  constructor(o: FakeClientOptions = {}, state?: State, identity?: T.Identity) {
    this.#o = o;
    this.scheme = o.scheme ?? new Scheme();
    this.#s = state ?? { objects: new Map(), rv: 0, actions: [], listeners: new Set(), failures: [] };
    this.#identity = identity;
  }

  /** Writes accepted so far, oldest first. */
  get actions(): readonly FakeAction[] {
    return this.#s.actions;
  }

  /** Makes the next call of `verb` fail with `error` (an outage, a conflict, …). */
  failNext(verb: FakeAction['verb'] | 'get' | 'list', error: Error): void {
    this.#s.failures.push({ verb, error });
  }

  /** Calls `fn` on every change, like a watch: what drives a controller under test. */
  onChange(fn: State['listeners'] extends Set<infer F> ? F : never): () => void {
    this.#s.listeners.add(fn);
    return () => this.#s.listeners.delete(fn);
  }

  /** Stores objects as they are (test fixtures), stamping the metadata the server would. */
  seed<T>(ref: KindRef<T>, ...objs: (T & T.ObjectLike)[]): void {
    for (const o of objs) this.#put(ref, this.#stamp(ref, structuredClone(o) as Obj), 'ADDED');
  }

  as(identity: T.Identity): T.Client {
    return new FakeClient(this.#o, this.#s, identity);
  }

  async resolve(apiVersion: string, kind: string): Promise<KindRef | undefined> {
    return this.scheme.find(apiVersion, kind);
  }

  async get<T>(ref: KindRef<T>, key: T.ObjectKey): Promise<T> {
    this.#maybeFail('get');
    return structuredClone(this.#must(ref, key)) as T;
  }

  async list<T>(ref: KindRef<T>, opts: T.ListOptions = {}): Promise<T.ObjectList<T>> {
    this.#maybeFail('list');
    const prefix = `${refKey(ref)}|`;
    const items = [...this.#s.objects.entries()]
      .filter(
        ([k, o]) => k.startsWith(prefix) && (!opts.namespace || o.metadata.namespace === opts.namespace),
      )
      .filter(([, o]) => matchesLabels(o, opts.labelSelector))
      .map(([, o]) => structuredClone(o) as T);
    return {
      apiVersion: apiVersionOf(ref),
      kind: `${ref.kind}List`,
      metadata: { resourceVersion: String(this.#s.rv) },
      items,
    };
  }

  async create<T>(ref: KindRef<T>, obj: T & T.ObjectLike, opts: T.WriteOptions = {}): Promise<T> {
    this.#maybeFail('create');
    const o = structuredClone(obj) as Obj;
    if (!o.metadata?.name && (o.metadata as { generateName?: string })?.generateName)
      o.metadata.name = `${(o.metadata as { generateName: string }).generateName}${randomUUID().slice(0, 5)}`;
    const key = this.#key(ref, o);
    if (this.#s.objects.has(key))
      throw new KubeError(409, 'AlreadyExists', `${ref.plural} "${o.metadata.name}" already exists`);
    if (this.#statusIsSubresource(ref)) delete o.status; // as the API server: set only through /status
    if (opts.dryRun) return this.#stamp(ref, o) as T;
    this.#record('create', ref, o);
    return structuredClone(this.#put(ref, this.#stamp(ref, o), 'ADDED')) as T;
  }

  async replace<T>(
    ref: KindRef<T>,
    obj: T & T.ObjectLike,
    opts: T.WriteOptions = {},
    sub?: 'status',
  ): Promise<T> {
    this.#maybeFail('replace');
    const cur = this.#must(ref, keyOf(obj));
    const next = structuredClone(obj) as Obj;
    this.#checkVersion(ref, cur, next.metadata?.resourceVersion);
    return this.#update(ref, cur, next, 'replace', sub, opts) as T;
  }

  async patch<T>(
    ref: KindRef<T>,
    key: T.ObjectKey,
    p: T.Patch,
    opts: T.WriteOptions = {},
    sub?: 'status',
  ): Promise<T> {
    this.#maybeFail(p.type === 'apply' ? 'apply' : 'patch');
    if (p.type === 'apply' && !this.#s.objects.has(this.#key(ref, { metadata: key })))
      return this.create(ref, p.patch as T & T.ObjectLike, opts);
    const cur = this.#must(ref, key);
    const next = (p.type === 'json' ? jsonPatch(cur, p.patch) : mergePatch(cur, p.patch)) as Obj;
    const wanted = p.type === 'merge' ? (p.patch as T.ObjectLike)?.metadata?.resourceVersion : undefined;
    this.#checkVersion(ref, cur, wanted);
    return this.#update(ref, cur, next, p.type === 'apply' ? 'apply' : 'patch', sub, opts) as T;
  }

  async apply<T>(
    ref: KindRef<T>,
    obj: T & T.ObjectLike,
    opts: { fieldManager: string; force?: boolean },
  ): Promise<T> {
    return this.patch(ref, keyOf(obj), { type: 'apply', patch: obj, ...opts });
  }

  async delete<T>(ref: KindRef<T>, key: T.ObjectKey, opts: T.DeleteOptions = {}): Promise<T | KubeStatus> {
    this.#maybeFail('delete');
    const cur = this.#must(ref, key);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== cur.metadata.uid)
      throw new KubeError(409, 'Conflict', `precondition failed: uid ${pre.uid} != ${cur.metadata.uid}`);
    if (pre?.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion)
      throw new KubeError(409, 'Conflict', 'precondition failed: resourceVersion changed');
    if (opts.dryRun) return structuredClone(cur) as T;
    this.#record('delete', ref, cur);
    if (cur.metadata.finalizers?.length) {
      if (cur.metadata.deletionTimestamp) return structuredClone(cur) as T;
      const next = { ...cur, metadata: { ...cur.metadata, deletionTimestamp: this.#now().toISOString() } };
      return structuredClone(this.#put(ref, this.#bump(next), 'MODIFIED')) as T;
    }
    this.#drop(ref, cur);
    return gone(`${ref.plural} "${key.name}" deleted`);
  }

  status(): T.StatusWriter {
    return {
      patch: (ref, key, p, opts) => this.patch(ref, key, p, opts, 'status'),
      replace: (ref, obj, opts) => this.replace(ref, obj, opts, 'status'),
    };
  }

  #update(
    ref: KindRef<unknown>,
    cur: Obj,
    next: Obj,
    verb: FakeAction['verb'],
    sub: 'status' | undefined,
    opts: T.WriteOptions,
  ) {
    if (sub === 'status') next = { ...cur, status: next.status };
    else if (this.#statusIsSubresource(ref)) next = { ...next, status: cur.status };
    // T.Identity fields are the server's, whatever the request said.
    next.metadata = {
      ...next.metadata,
      uid: cur.metadata.uid,
      name: cur.metadata.name,
      namespace: cur.metadata.namespace,
    };
    if (cur.metadata.deletionTimestamp) next.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
    if (opts.dryRun) return structuredClone(next);
    this.#record(verb, ref, cur, sub);
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      this.#drop(ref, cur);
      return structuredClone(next);
    }
    return structuredClone(this.#put(ref, this.#bump(next), 'MODIFIED'));
  }

  #statusIsSubresource(ref: KindRef<unknown>): boolean {
    return (this.#o.statusSubresource ?? ((r: KindRef<unknown>) => r.group !== ''))(ref);
  }

  #stamp(ref: KindRef<unknown>, o: Obj): Obj {
    o.apiVersion ??= apiVersionOf(ref);
    o.kind ??= ref.kind;
    o.metadata = { ...o.metadata, uid: o.metadata?.uid ?? randomUUID(), generation: 1 };
    (o.metadata as { creationTimestamp?: string }).creationTimestamp ??= this.#now().toISOString();
    if (!ref.namespaced) delete o.metadata.namespace;
    return this.#bump(o);
  }

  #bump(o: Obj): Obj {
    o.metadata.resourceVersion = String(++this.#s.rv);
    return o;
  }

  #checkVersion(ref: KindRef<unknown>, cur: Obj, wanted: string | undefined) {
    if (wanted && wanted !== cur.metadata.resourceVersion)
      throw new KubeError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${ref.plural} "${cur.metadata.name}": the object has been modified`,
      );
  }

  #key(ref: KindRef<unknown>, o: T.ObjectLike): string {
    const name = o.metadata?.name;
    if (!name) throw new KubeError(422, 'Invalid', `${ref.kind}: metadata.name is required`);
    if (ref.namespaced && !o.metadata?.namespace)
      throw new KubeError(422, 'Invalid', `${ref.kind} ${name}: a namespace is required`);
    return `${refKey(ref)}|${ref.namespaced ? o.metadata?.namespace : ''}/${name}`;
  }

  #must(ref: KindRef<unknown>, key: T.ObjectKey): Obj {
    const o = this.#s.objects.get(this.#key(ref, { metadata: key }));
    if (!o) throw new KubeError(404, 'NotFound', `${ref.plural} "${key.name}" not found`);
    return o;
  }

  #put(ref: KindRef<unknown>, o: Obj, type: 'ADDED' | 'MODIFIED'): Obj {
    this.#s.objects.set(this.#key(ref, o), o);
    for (const l of this.#s.listeners) l(type, ref, structuredClone(o));
    return o;
  }

  #drop(ref: KindRef<unknown>, o: Obj): void {
    this.#s.objects.delete(this.#key(ref, o));
    for (const l of this.#s.listeners) l('DELETED', ref, structuredClone(o));
  }

  #record(verb: FakeAction['verb'], ref: KindRef<unknown>, o: Obj, sub?: 'status') {
    const { namespace, name = '' } = o.metadata;
    this.#s.actions.push({
      verb,
      ref: refKey(ref),
      namespace,
      name,
      ...(sub ? { subresource: sub } : {}),
      ...(this.#identity ? { identity: this.#identity } : {}),
    });
  }

  #maybeFail(verb: string) {
    const i = this.#s.failures.findIndex((f) => f.verb === verb);
    if (i >= 0) throw this.#s.failures.splice(i, 1)[0]?.error;
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }
}

const keyOf = (o: T.ObjectLike): T.ObjectKey => ({
  namespace: o.metadata?.namespace,
  name: o.metadata?.name ?? '',
});
