/**
 * Test helpers for the engine: an in-memory ResourceLookup (our own seam, standing in for the
 * controller's informer caches) and builders for the objects a query needs.
 */
import { createServer } from 'node:net';
import type { V1Secret } from '@kubernetes/client-node';
import type { Agent, Memory, Model, Query, Team, Tool } from '../../pkg/api/index.ts';
import { API_VERSION, SECRET_USAGE_ENGINE, SECRET_USAGE_LABEL } from '../../pkg/api/index.ts';
import { engineSecretValue } from '../../pkg/controller/lookup.ts';
import type { ResourceLookup } from '../../pkg/engine/index.ts';

export const NS = 'engine-test';

type Kind = 'agent' | 'team' | 'model' | 'tool' | 'memory';

export class MapLookup implements ResourceLookup {
  readonly #objects = new Map<string, unknown>();
  readonly #secrets = new Map<string, V1Secret>();

  put(kind: Kind, obj: { metadata: { name: string; namespace?: string } }): this {
    this.#objects.set(`${kind}/${obj.metadata.namespace ?? NS}/${obj.metadata.name}`, obj);
    return this;
  }

  /** A Secret with plain values; opted in to engine use unless `labels` say otherwise. */
  secret(
    name: string,
    data: Record<string, string>,
    namespace = NS,
    labels: Record<string, string> = { [SECRET_USAGE_LABEL]: SECRET_USAGE_ENGINE },
  ): this {
    this.#secrets.set(`${namespace}/${name}`, { metadata: { name, namespace, labels }, stringData: data });
    return this;
  }

  #get<T>(kind: Kind, ns: string, name: string): T | undefined {
    return this.#objects.get(`${kind}/${ns}/${name}`) as T | undefined;
  }

  agent = (ns: string, name: string) => this.#get<Agent>('agent', ns, name);
  team = (ns: string, name: string) => this.#get<Team>('team', ns, name);
  model = (ns: string, name: string) => this.#get<Model>('model', ns, name);
  tool = (ns: string, name: string) => this.#get<Tool>('tool', ns, name);
  memory = (ns: string, name: string) => this.#get<Memory>('memory', ns, name);
  // The controller's own rule (CacheLookup): an un-opted Secret is an error, not a value.
  secretValue = (ns: string, name: string, key: string) =>
    engineSecretValue(this.#secrets.get(`${ns}/${name}`), key);
}

function meta(name: string) {
  return { name, namespace: NS, uid: `uid-${name}` };
}

export function model(name: string, spec: Partial<Model['spec']> & { baseUrl: string }): Model {
  return {
    apiVersion: API_VERSION,
    kind: 'Model',
    metadata: meta(name),
    spec: { type: 'openai', model: name, ...spec },
  };
}

export function agent(name: string, spec: Partial<Agent['spec']>): Agent {
  return {
    apiVersion: API_VERSION,
    kind: 'Agent',
    metadata: meta(name),
    spec: { prompt: `You are ${name}.`, ...spec },
  };
}

export function team(name: string, spec: Team['spec']): Team {
  return { apiVersion: API_VERSION, kind: 'Team', metadata: meta(name), spec };
}

export function tool(name: string, url: string, spec: Partial<Tool['spec']> = {}): Tool {
  return {
    apiVersion: API_VERSION,
    kind: 'Tool',
    metadata: meta(name),
    spec: { type: 'http', http: { url, method: 'POST' }, ...spec },
  };
}

export function memory(name: string, address: string | undefined): Memory {
  return {
    apiVersion: API_VERSION,
    kind: 'Memory',
    metadata: meta(name),
    spec: { address: { value: address ?? 'http://unresolved.example' } },
    status: address
      ? { phase: 'ready', lastResolvedAddress: address }
      : { phase: 'error', message: 'service not found' },
  };
}

let counter = 0;

/** A Query as the controller hands it over (defaults applied by the API server). */
export function query(
  target: Query['spec']['target'],
  input: Query['spec']['input'],
  extra: Partial<Query['spec']> & { annotations?: Record<string, string>; name?: string } = {},
): Query {
  const { annotations, name, ...spec } = extra;
  const qname = name ?? `q-${process.pid}-${++counter}`;
  return {
    apiVersion: API_VERSION,
    kind: 'Query',
    metadata: { ...meta(qname), annotations },
    spec: { input, target, ttl: '720h', timeout: '5m', cancel: false, ...spec },
  };
}

export const run = (signal = new AbortController().signal) => ({ signal });

/** A loopback port that was free a moment ago (bound, then released). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
