import type { TestProject } from 'vitest/node';
import { resolveServices } from '../support/services.ts';

/**
 * Global setup of the `broker-durable` project: only PostgreSQL and Redis (the broker suites need
 * no Kubernetes control plane), provided under the same key the integration setup uses.
 */
let stop: (() => Promise<void>) | undefined;

export async function setup(project: TestProject): Promise<void> {
  const services = await resolveServices();
  stop = services.stop;
  project.provide('services', services.urls);
}

export async function teardown(): Promise<void> {
  await stop?.();
}
