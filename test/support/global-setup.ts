import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { type ControlPlane, projectRoot, startControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { resolveServices, type ServiceUrls } from './services.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    kubeServer: string;
    kubeTokens: Record<'admin' | 'gateway' | 'controller', string>;
    kubectl: string;
    services: ServiceUrls;
  }
}

let cp: ControlPlane | undefined;
let stopServices: (() => Promise<void>) | undefined;

/** Boots one real control plane (etcd + kube-apiserver, CRDs applied) for the whole run. */
export async function setup(project: TestProject): Promise<void> {
  const [plane, services] = await Promise.all([
    startControlPlane({ crdDir: join(projectRoot(), 'crds') }),
    resolveServices(),
  ]);
  cp = plane;
  stopServices = services.stop;
  console.log(`control plane ready in ${cp.startMs} ms at ${cp.server}`);
  project.provide('kubeconfig', cp.kubeconfigPath);
  project.provide('kubeServer', cp.server);
  project.provide('kubeTokens', cp.tokens);
  project.provide('kubectl', cp.binaries.kubectl);
  project.provide('services', services.urls);
}

export async function teardown(): Promise<void> {
  await Promise.all([cp?.stop(), stopServices?.()]);
}
