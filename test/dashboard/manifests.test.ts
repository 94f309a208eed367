/**
 * The dashboard's manifests: a workload with no Kubernetes access (no RBAC, no service account
 * token) in the base install, and in the tenant overlay served under `/<namespace>/` behind the
 * example ingress, which keeps the prefix and raises the proxy buffer for the session cookie.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kubectl } from '../support/kube.ts';
import { ROOT } from '../support/process.ts';

const manifests = join(ROOT, 'manifests');
const render = async (dir: string) => {
  const r = await kubectl(['kustomize', join(manifests, dir)]);
  expect(r.code, r.stderr).toBe(0);
  return parseAllDocuments(r.stdout).map((d) => d.toJS());
};
const dashboardOf = (docs: any[]) =>
  docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'berth-dashboard');
const envOf = (deployment: any) =>
  Object.fromEntries(
    deployment.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value ?? e.valueFrom]),
  );

describe('dashboard manifests', () => {
  it('run `berth dashboard` with no access to Kubernetes, on the API service mode', async () => {
    const docs = await render('base');
    const d = dashboardOf(docs);
    expect(d.spec.template.spec.containers[0].args).toEqual(['dashboard', '--port', '3000']);
    expect(d.spec.template.spec.automountServiceAccountToken).toBe(false);
    const api = docs.find((x) => x.kind === 'Deployment' && x.metadata.name === 'berth-api');
    expect(envOf(d).AUTH_MODE).toBe(envOf(api).AUTH_MODE);
    expect(envOf(d).API_SERVICE_URL).toBe('http://berth-api:8000');
    const bindings = docs.filter((x) => /Binding$/.test(x.kind)).flatMap((b) => b.subjects ?? []);
    expect(bindings.map((s: any) => s.name)).not.toContain('berth-dashboard');
  });

  it('serve a tenant under its namespace, where the example ingress sends it', async () => {
    const d = dashboardOf(await render('overlays/tenant'));
    expect(envOf(d)).toMatchObject({
      TENANT: { fieldRef: { fieldPath: 'metadata.namespace' } },
      BASE_PATH: '/$(TENANT)',
      API_SERVICE_URL: 'http://berth-api:8000',
    });
    const ingress = parseAllDocuments(
      readFileSync(join(manifests, 'examples', 'tenant-ingress.yaml'), 'utf8'),
    )[0]?.toJS();
    expect(ingress.metadata.annotations['nginx.ingress.kubernetes.io/proxy-buffer-size']).toBe('16k');
    expect(ingress.metadata.annotations['nginx.ingress.kubernetes.io/rewrite-target']).toBeUndefined();
    expect(ingress.spec.rules[0].http.paths[0].backend.service).toEqual({
      name: 'berth-dashboard',
      port: { number: 3000 },
    });
  });
});
