import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { ApiResourceInfo } from '../kube/discovery.ts';
import { resourcePath } from '../kube/discovery.ts';
import { KubeError } from '../kube/errors.ts';
import { rawRequest } from '../kube/raw.ts';

/** Writes go straight to the API server as JSON; failures come back as KubeError. */
export class KubeWriter {
  private readonly kc: KubeConfig;

  constructor(kc: KubeConfig) {
    this.kc = kc;
  }

  async send<T = KubernetesObject>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<T> {
    const res = await rawRequest(this.kc, { method, path, body, contentType });
    if (res.status >= 300) throw KubeError.fromResponse(res.status, res.body, `${method} ${path}`);
    return res.json<T>();
  }

  create(info: ApiResourceInfo, ns: string, obj: KubernetesObject) {
    return this.send('POST', resourcePath(info, ns), obj);
  }

  replace(info: ApiResourceInfo, ns: string, name: string, obj: KubernetesObject) {
    return this.send('PUT', resourcePath(info, ns, name), obj);
  }

  mergePatch(info: ApiResourceInfo, ns: string, name: string, patch: unknown) {
    return this.send('PATCH', resourcePath(info, ns, name), patch, 'application/merge-patch+json');
  }

  remove(info: ApiResourceInfo, ns: string, name: string) {
    return this.send<KubernetesObject>('DELETE', resourcePath(info, ns, name));
  }

  get(info: ApiResourceInfo, ns: string, name: string) {
    return this.send('GET', resourcePath(info, ns, name));
  }

  list(info: ApiResourceInfo, ns: string) {
    return this.send<{ items: KubernetesObject[] }>('GET', resourcePath(info, ns));
  }
}
