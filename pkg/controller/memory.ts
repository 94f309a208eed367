/** Memory address resolution: the shared address rules of `address.ts` on the Memory kind. */
import { Kinds, type Memory } from '../api/index.ts';
import type { Client } from '../kube/client/index.ts';
import { AddressReconciler, addressRefers, addressStatus, resolveAddress } from './address.ts';

export type { Resolution, ResolveScope } from './address.ts';

/** Resolves a Memory's address: a URL as given, or a Service's cluster DNS name. */
export const resolveMemory = resolveAddress;
/** Whether a Memory refers to the given Service or Secret (so its change re-enqueues the Memory). */
export const memoryRefers = addressRefers;
/** The status a resolution asks for; undefined when the Memory already has it (no write). */
export const memoryStatus = addressStatus;

/** Sets a Memory's status.lastResolvedAddress, phase ready|error, message and a Ready condition. */
export class MemoryReconciler extends AddressReconciler<Memory> {
  constructor(client: Client, watchNamespace?: string) {
    super(client, Kinds.Memory, watchNamespace);
  }
}
