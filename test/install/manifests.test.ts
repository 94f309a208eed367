/**
 * Every kustomization under manifests/ is accepted by the real API server (server-side dry run):
 * schemas, RBAC objects and the CRDs all validate. The tenant overlay is installed the way the
 * docs say, through a kustomization holding only `namespace` and `resources`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { projectRoot } from '../../pkg/kube/controlplane/index.ts';
import { kubectl } from '../support/kube.ts';

const manifests = join(projectRoot(), 'manifests');
const scratch = mkdtempSync(join(projectRoot(), '.berth-kustomize-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A tenant's own kustomization: only `namespace` and `resources`, as docs/install.md shows. */
function tenantKustomization(namespace: string, extra = ''): string {
  const dir = join(scratch, namespace);
  rmSync(dir, { recursive: true, force: true });
  const rel = relative(dir, join(manifests, 'overlays', 'tenant'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'kustomization.yaml'), `namespace: ${namespace}\nresources: [${rel}]\n${extra}`);
  return dir;
}

beforeAll(async () => {
  // Server-side dry runs of namespaced objects need their namespace to exist.
  // Applied, not created: other files of the same run create berth-system too.
  for (const ns of ['berth-system', 'tenant-dry-a']) {
    const namespace = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    expect((await kubectl(['apply', '-f', '-'], namespace)).code).toBe(0);
  }
});

describe('kubectl apply --dry-run=server -k', () => {
  for (const dir of ['base', 'overlays/durable-broker']) {
    it(`accepts manifests/${dir}`, async () => {
      const r = await kubectl(['apply', '--dry-run=server', '-k', join(manifests, dir)]);
      expect(r.stderr).not.toMatch(/error/i);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/deployment\.apps\/berth-broker .*\(server dry run\)/);
    });
  }

  // docs/install.md: each part applies on its own (`kubectl apply -k manifests/base/api`): its
  // RoleBinding/ClusterRoleBinding subjects need a namespace, which the part sets itself.
  for (const part of ['api', 'controller', 'broker', 'dashboard']) {
    it(`accepts manifests/base/${part} on its own, into berth-system`, async () => {
      const r = await kubectl(['apply', '--dry-run=server', '-k', join(manifests, 'base', part)]);
      // (A warning is possible: the test control plane made its own berth-controller ClusterRole.)
      expect(r.stderr).not.toMatch(/error/i);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`deployment\\.apps/berth-${part} .*\\(server dry run\\)`));
      const docs = parseAllDocuments(
        (await kubectl(['kustomize', join(manifests, 'base', part)])).stdout,
      ).map((d) => d.toJS());
      for (const d of docs.filter((x) => x.kind !== 'ClusterRole' && x.kind !== 'ClusterRoleBinding'))
        expect(d.metadata.namespace, `${d.kind}/${d.metadata.name}`).toBe('berth-system');
      for (const d of docs.filter((x) => x.subjects))
        for (const s of d.subjects) expect(s.namespace, `${d.kind}/${d.metadata.name}`).toBe('berth-system');
    });
  }

  it('runs the single-tenant API for its own namespace, with a Role and no ClusterRole', async () => {
    const docs = parseAllDocuments((await kubectl(['kustomize', join(manifests, 'base')])).stdout).map((d) =>
      d.toJS(),
    );
    const api = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'berth-api');
    const env = api.spec.template.spec.containers[0].env;
    expect(env).toContainEqual({
      name: 'NAMESPACE',
      valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
    });
    const rbac = docs.filter((d) => /Role/.test(d.kind)).map((d) => `${d.kind}/${d.metadata.name}`);
    expect(rbac).toContain('Role/berth-api');
    expect(rbac.filter((r) => r.startsWith('Cluster') && r.includes('berth-api'))).toEqual([]);
  });

  it('grants nothing cluster-wide that a Role or a resource name could narrow', async () => {
    const dir = tenantKustomization('tenant-dry-a');
    const component = relative(dir, join(manifests, 'components', 'impersonation'));
    const withImpersonation = tenantKustomization('tenant-dry-a', `components: [${component}]\n`);
    const writes = ['create', 'update', 'patch', 'delete', 'deletecollection', '*'];
    for (const target of [
      join(manifests, 'base'),
      join(manifests, 'overlays', 'durable-broker'),
      withImpersonation,
    ]) {
      const out = (await kubectl(['kustomize', target])).stdout;
      const clusterRoles = parseAllDocuments(out)
        .map((d) => d.toJS())
        .filter((d) => d.kind === 'ClusterRole');
      for (const role of clusterRoles)
        for (const rule of role.rules as Array<Record<string, string[] | undefined>>) {
          const what = `${role.metadata.name}: ${JSON.stringify(rule)}`;
          expect(
            [...(rule.verbs ?? []), ...(rule.resources ?? []), ...(rule.apiGroups ?? [])],
            what,
          ).not.toContain('*');
          const touchesData = rule.resources?.some((r) => r === 'secrets' || r === 'configmaps');
          if (touchesData && rule.verbs?.some((v) => writes.includes(v)))
            expect(rule.resourceNames?.length, `${what} writes without names`).toBeGreaterThan(0);
          if (rule.verbs?.includes('impersonate')) {
            expect(rule.resources, what).not.toContain('serviceaccounts');
            if (rule.resources?.includes('groups')) {
              expect(rule.resourceNames?.length, `${what} impersonates every group`).toBeGreaterThan(0);
              expect(
                rule.resourceNames?.filter((g) => g.startsWith('system:')),
                what,
              ).toEqual([]);
            }
          }
        }
    }
  });

  it('accepts a tenant installed through its own kustomization, confined to its namespace', async () => {
    const r = await kubectl(['apply', '--dry-run=server', '-k', tenantKustomization('tenant-dry-a')]);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('role.rbac.authorization.k8s.io/berth-api ');
    const rendered = await kubectl(['kustomize', tenantKustomization('tenant-dry-a')]);
    // Cluster-wide: only the tenant broker's binding to the base's tokenreviews ClusterRole
    // (test/install/tenant-broker.test.ts checks its per-tenant name).
    const objs = parseAllDocuments(rendered.stdout).map((d) => d.toJS());
    expect(objs.filter((d) => d.kind === 'ClusterRole')).toEqual([]);
    const bindings = objs.filter((d) => d.kind === 'ClusterRoleBinding');
    expect(bindings.map((b) => [b.roleRef.name, b.subjects])).toEqual([
      [
        'berth-broker-tokenreview',
        [{ kind: 'ServiceAccount', name: 'berth-broker', namespace: 'tenant-dry-a' }],
      ],
    ]);
    expect(rendered.stdout).toContain('namespace: tenant-dry-a');
  });

  it('accepts the optional impersonation component, bound to the tenant account only', async () => {
    const dir = tenantKustomization('tenant-dry-a');
    const component = relative(dir, join(manifests, 'components', 'impersonation'));
    const withImpersonation = tenantKustomization(
      'tenant-dry-a',
      `components: [${component}]\nnameSuffix: -tenant-dry-a\n`,
    );
    const r = await kubectl(['apply', '--dry-run=server', '-k', withImpersonation]);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    const rendered = (await kubectl(['kustomize', withImpersonation])).stdout;
    expect(rendered).toContain('verbs:\n  - impersonate');
    expect(rendered).toMatch(
      /kind: ServiceAccount\n {2}name: berth-api-tenant-dry-a\n {2}namespace: tenant-dry-a/,
    );
  });
});
