import type { V1Secret } from '@kubernetes/client-node';
import {
  type Agent,
  engineUseProblem,
  Kinds,
  type MCPServer,
  type Memory,
  type Model,
  type Team,
  type Tool,
} from '../api/index.ts';
import type { ResourceLookup } from '../engine/contract.ts';
import type { InformerCache } from '../kube/cache.ts';
import { CoreKinds, type KindRef } from '../kube/kinds.ts';

const SecretRef = CoreKinds.Secret as KindRef<V1Secret>;

/**
 * The engine's ResourceLookup served from the shared informer cache: no API call per query. It is
 * synchronous (the engine resolves a whole target tree per query), hence the cache, not the Reader.
 */
export class CacheLookup implements ResourceLookup {
  private readonly cache: InformerCache;

  constructor(cache: InformerCache) {
    this.cache = cache;
  }

  agent(namespace: string, name: string): Agent | undefined {
    return this.cache.get(Kinds.Agent, namespace, name);
  }

  team(namespace: string, name: string): Team | undefined {
    return this.cache.get(Kinds.Team, namespace, name);
  }

  model(namespace: string, name: string): Model | undefined {
    return this.cache.get(Kinds.Model, namespace, name);
  }

  tool(namespace: string, name: string): Tool | undefined {
    return this.cache.get(Kinds.Tool, namespace, name);
  }

  memory(namespace: string, name: string): Memory | undefined {
    return this.cache.get(Kinds.Memory, namespace, name);
  }

  mcpServer(namespace: string, name: string): MCPServer | undefined {
    return this.cache.get(Kinds.MCPServer, namespace, name);
  }

  secretValue(namespace: string, name: string, key: string): string | undefined {
    return engineSecretValue(this.cache.get(SecretRef, namespace, name), key);
  }
}

/**
 * A Secret's value for a call the engine or controller makes (a Model key, a header): only from a
 * Secret that opted in (`engineUseProblem`), else an Error naming the Secret and what to do —
 * never its value. Undefined when the Secret or key is missing.
 */
export function engineSecretValue(s: V1Secret | undefined, key: string): string | undefined {
  if (!s) return undefined;
  const problem = engineUseProblem(s);
  if (problem) throw new Error(problem);
  return secretValue(s, key);
}

/** A Secret's value as text: `data` is base64; `stringData` only on objects built in tests. */
export function secretValue(s: V1Secret | undefined, key: string): string | undefined {
  const data = s?.data?.[key];
  if (data !== undefined) return Buffer.from(data, 'base64').toString('utf8');
  return s?.stringData?.[key];
}
