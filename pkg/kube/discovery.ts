import type { KubeConfig } from '@kubernetes/client-node';
import { type KindRef, kindRef } from './kinds.ts';
import { rawRequest } from './raw.ts';

/** What discovery knows of a resource: exactly a kind reference. */
export type ApiResourceInfo = KindRef;

interface ResourceList {
  resources: Array<{ name: string; kind: string; namespaced: boolean }>;
}

/** Kind → resource lookups from API discovery, cached per group/version and refreshed on a miss. */
export class Discovery {
  private readonly cache = new Map<string, ApiResourceInfo[]>();
  private readonly kc: KubeConfig;

  constructor(kc: KubeConfig) {
    this.kc = kc;
  }

  async resource(apiVersion: string, kindOrPlural: string): Promise<ApiResourceInfo | undefined> {
    const find = (list: ApiResourceInfo[]) =>
      list.find((r) => r.kind === kindOrPlural || r.plural === kindOrPlural) ??
      list.find((r) => r.kind.toLowerCase() === kindOrPlural.toLowerCase());
    const cached = this.cache.get(apiVersion);
    const hit = cached && find(cached);
    if (hit) return hit;
    const fresh = await this.load(apiVersion);
    return fresh && find(fresh);
  }

  private async load(apiVersion: string): Promise<ApiResourceInfo[] | undefined> {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const res = await rawRequest(this.kc, { path });
    if (res.status === 404) return undefined;
    if (res.status !== 200)
      throw new Error(`discovery of ${apiVersion} failed: HTTP ${res.status} ${res.body.slice(0, 200)}`);
    const list = res
      .json<ResourceList>()
      .resources.filter((r) => !r.name.includes('/'))
      .map((r) =>
        kindRef({
          group: group ?? '',
          version: version ?? '',
          kind: r.kind,
          plural: r.name,
          namespaced: r.namespaced,
        }),
      );
    this.cache.set(apiVersion, list);
    return list;
  }
}
