import type { KubeStatus } from '../errors.ts';
import type { KindRef, Scheme } from '../kinds.ts';
import type { Identity, ObjectLike } from './types.ts';

export type Obj = ObjectLike & { metadata: NonNullable<ObjectLike['metadata']>; status?: unknown };

/** One write the fake accepted: what tests count ("at most N API writes per query"). */
export interface FakeAction {
  verb: 'create' | 'replace' | 'patch' | 'delete' | 'apply';
  subresource?: 'status';
  ref: string;
  namespace?: string;
  name: string;
  identity?: Identity;
}

export interface FakeClientOptions {
  scheme?: Scheme;
  /** Kinds whose `status` is a subresource (writes to the object ignore it). Default: custom kinds. */
  statusSubresource?: (ref: KindRef<unknown>) => boolean;
  now?: () => Date;
}

export interface State {
  objects: Map<string, Obj>;
  rv: number;
  actions: FakeAction[];
  listeners: Set<(type: 'ADDED' | 'MODIFIED' | 'DELETED', ref: KindRef<unknown>, obj: Obj) => void>;
  failures: Array<{ verb: FakeAction['verb'] | 'get' | 'list'; error: Error }>;
}

export const gone = (what: string): KubeStatus => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Success',
  message: what,
});
