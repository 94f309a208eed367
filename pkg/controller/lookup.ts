import type { V1Secret } from '@kubernetes/client-node';
import type { Agent, Memory, Model, Team, Tool } from '../api/index.ts';
import type { ResourceLookup } from '../engine/contract.ts';
import type { InformerCache } from '../kube/cache.ts';

/** The engine's ResourceLookup served from the shared informer caches: no API call per query. */
export class CacheLookup implements ResourceLookup {
  private readonly cache: InformerCache;

  constructor(cache: InformerCache) {
    this.cache = cache;
  }

  agent(namespace: string, name: string): Agent | undefined {
    return this.cache.get('agents', namespace, name) as Agent | undefined;
  }

  team(namespace: string, name: string): Team | undefined {
    return this.cache.get('teams', namespace, name) as Team | undefined;
  }

  model(namespace: string, name: string): Model | undefined {
    return this.cache.get('models', namespace, name) as Model | undefined;
  }

  tool(namespace: string, name: string): Tool | undefined {
    return this.cache.get('tools', namespace, name) as Tool | undefined;
  }

  memory(namespace: string, name: string): Memory | undefined {
    return this.cache.get('memories', namespace, name) as Memory | undefined;
  }

  secretValue(namespace: string, name: string, key: string): string | undefined {
    const s = this.cache.get('secrets', namespace, name) as V1Secret | undefined;
    const data = s?.data?.[key];
    if (data !== undefined) return Buffer.from(data, 'base64').toString('utf8');
    // stringData is write-only on the server, but objects built in tests may still carry it.
    return s?.stringData?.[key];
  }
}
