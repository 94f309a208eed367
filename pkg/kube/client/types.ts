import type { KubeStatus } from '../errors.ts';
import type { KindRef, Scheme } from '../kinds.ts';

/** Which object: `namespace` is ignored for cluster-scoped kinds. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

/** The part of an object every client call relies on (raw JSON: timestamps are strings). */
export interface ObjectMetaLike {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  finalizers?: string[];
  deletionTimestamp?: string | Date;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface ObjectLike {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaLike;
}

export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ListOptions extends CallOptions {
  /** One namespace; all (that the reader may see) when absent. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; with `continue`, pages through a live list. Lists served from the cache ignore it. */
  limit?: number;
  continue?: string;
}

export interface WriteOptions extends CallOptions {
  /** Server-side validation only; nothing is persisted. */
  dryRun?: boolean;
  fieldManager?: string;
}

export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

/**
 * A patch and its type. Strategic merge patch is not offered: the API server answers 415 for it on
 * custom resources. Put `metadata.resourceVersion` in a merge patch to make it conditional.
 */
export type Patch =
  | { type: 'merge'; patch: unknown }
  | { type: 'json'; patch: JsonPatchOp[] }
  | { type: 'apply'; patch: ObjectLike; fieldManager: string; force?: boolean };

export interface DeleteOptions extends WriteOptions {
  /** Delete only if the object is still this one (uid) or unchanged (resourceVersion): else 409. */
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
}

export interface ApplyOptions extends CallOptions {
  fieldManager: string;
  /** Take over fields another manager owns (what controllers do). Default true. */
  force?: boolean;
}

/** Who requests are made as, through `Impersonate-User` / `Impersonate-Group` headers. */
export interface Identity {
  user: string;
  groups?: string[];
}

/**
 * Reads. `get` throws a KubeError with reason NotFound for a missing object (use `ignoreNotFound`).
 * The process's client reads cached kinds from the shared informer cache and everything else live.
 */
export interface Reader {
  get<T>(ref: KindRef<T>, key: ObjectKey, opts?: CallOptions): Promise<T>;
  list<T>(ref: KindRef<T>, opts?: ListOptions): Promise<ObjectList<T>>;
}

export interface StatusWriter {
  /** Patches the `status` subresource (merge or json; `apply` with its field manager). */
  patch<T>(ref: KindRef<T>, key: ObjectKey, patch: Patch, opts?: WriteOptions): Promise<T>;
  replace<T>(ref: KindRef<T>, obj: T & ObjectLike, opts?: WriteOptions): Promise<T>;
}

export interface Writer {
  create<T>(ref: KindRef<T>, obj: T & ObjectLike, opts?: WriteOptions): Promise<T>;
  /** PUT: conditional on `metadata.resourceVersion` when the object carries one. */
  replace<T>(ref: KindRef<T>, obj: T & ObjectLike, opts?: WriteOptions): Promise<T>;
  patch<T>(ref: KindRef<T>, key: ObjectKey, patch: Patch, opts?: WriteOptions): Promise<T>;
  /**
   * Deletes; answers the object as it stands (still there, with deletionTimestamp, when finalizers
   * hold it) or the API server's Status when it is gone.
   */
  delete<T>(ref: KindRef<T>, key: ObjectKey, opts?: DeleteOptions): Promise<T | KubeStatus>;
  /** Server-side apply of a whole object under a field manager. */
  apply<T>(ref: KindRef<T>, obj: T & ObjectLike, opts: ApplyOptions): Promise<T>;
}

export interface Client extends Reader, Writer {
  readonly scheme: Scheme;
  status(): StatusWriter;
  /**
   * The same client acting as another user: every request carries the impersonation headers and
   * reads go live (the informer cache holds what the process may see, not what the user may).
   */
  as(identity: Identity): Client;
  /**
   * The kind for `apiVersion` and a Kind, plural or singular in any case (`matchResource`): scheme
   * first, then discovery; undefined when neither serves it (never a guessed plural).
   */
  resolve(apiVersion: string, kindOrPlural: string): Promise<KindRef | undefined>;
}
