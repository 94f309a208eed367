import type { KubeConfig } from '@kubernetes/client-node';
import { type KindRef, kindRef, matchResource, type ResourceNames, splitApiVersion } from './kinds.ts';
import { rawRequest } from './raw.ts';

/** What discovery knows of a resource: exactly a kind reference. */
export type ApiResourceInfo = KindRef;

interface ResourceList {
  resources: Array<{ name: string; singularName?: string; kind: string; namespaced: boolean }>;
}

/**
 * Kind → resource lookups from API discovery, cached per group/version and refreshed on a miss.
 * A name matches a resource's Kind, plural or singular, exactly or ignoring case (`matchResource`);
 * a name that matches nothing is unknown, never guessed.
 */
export class Discovery {
  private readonly cache = new Map<string, ResourceNames[]>();
  private readonly kc: KubeConfig;

  constructor(kc: KubeConfig) {
    this.kc = kc;
  }

  async resource(apiVersion: string, kindOrPlural: string): Promise<ApiResourceInfo | undefined> {
    const cached = this.cache.get(apiVersion);
    const hit = cached && matchResource(cached, kindOrPlural);
    if (hit) return hit;
    const fresh = await this.load(apiVersion);
    return fresh && matchResource(fresh, kindOrPlural);
  }

  private async load(apiVersion: string): Promise<ResourceNames[] | undefined> {
    const { group, version } = splitApiVersion(apiVersion);
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const res = await rawRequest(this.kc, { path });
    if (res.status === 404) return undefined;
    if (res.status !== 200)
      throw new Error(`discovery of ${apiVersion} failed: HTTP ${res.status} ${res.body.slice(0, 200)}`);
    const list = res
      .json<ResourceList>()
      .resources.filter((r) => !r.name.includes('/'))
      .map((r) => ({
        ref: kindRef({ group, version, kind: r.kind, plural: r.name, namespaced: r.namespaced }),
        // Older servers leave singularName empty; kubectl then uses the lower-case Kind.
        singular: r.singularName || r.kind.toLowerCase(),
      }));
    this.cache.set(apiVersion, list);
    return list;
  }
}
