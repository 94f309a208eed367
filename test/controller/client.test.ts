/**
 * The typed HttpClient against the real API server: every verb, preconditions, server-side apply,
 * KubeError reasons, and impersonation (`as({user, groups})`) authorized by real RBAC.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type Query } from '../../pkg/api/index.ts';
import type { Client, ObjectLike } from '../../pkg/kube/client/index.ts';
import { KubeError } from '../../pkg/kube/errors.ts';
import { CoreKinds, type KindRef, kindRef } from '../../pkg/kube/kinds.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { liveClient, queryObject } from './support.ts';

const ConfigMap = CoreKinds.ConfigMap as KindRef<V1ConfigMap>;
type RbacObject = ObjectLike & Record<string, unknown>;
const rbac = (kind: string, plural: string) =>
  kindRef<RbacObject>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind, plural, namespaced: true });
const Role = rbac('Role', 'roles');
const RoleBinding = rbac('RoleBinding', 'rolebindings');
interface Review {
  status?: { userInfo?: { username?: string; groups?: string[] } };
}
const SelfSubjectReview = kindRef<Review>({
  group: 'authentication.k8s.io',
  version: 'v1',
  kind: 'SelfSubjectReview',
  plural: 'selfsubjectreviews',
  namespaced: false,
});

let ns: string;
const admin = liveClient(kubeConfig());
const key = (name: string) => ({ namespace: ns, name });
const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>) => ({
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  data,
});

/** The KubeError a call failed with (fails the test when it did not fail). */
async function failure(p: Promise<unknown>): Promise<KubeError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KubeError);
  return err as KubeError;
}

beforeAll(async () => {
  ns = await createNamespace('ctl-client');
});

describe('HttpClient', () => {
  it('create, get, list (selectors, pages), replace (conditional), delete', async () => {
    await admin.create(ConfigMap, cm('a', { k: '1' }, { team: 'x' }));
    await admin.create(ConfigMap, cm('b', {}, { team: 'y' }));
    await admin.create(ConfigMap, cm('c', {}, { team: 'x' }));
    const a = await admin.get(ConfigMap, key('a'));
    expect(a).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', data: { k: '1' } });
    const x = await admin.list(ConfigMap, { namespace: ns, labelSelector: 'team=x' });
    expect(x.items.map((o) => o.metadata?.name)).toEqual(['a', 'c']);
    expect(x.items[0]?.kind).toBe('ConfigMap'); // list items get their kind back
    const page1 = await admin.list(ConfigMap, { namespace: ns, labelSelector: 'team', limit: 2 });
    expect(page1.items).toHaveLength(2);
    const page2 = await admin.list(ConfigMap, {
      namespace: ns,
      labelSelector: 'team',
      continue: page1.metadata.continue,
    });
    expect(page2.items.map((o) => o.metadata?.name)).toEqual(['c']);
    const replaced = await admin.replace(ConfigMap, { ...a, data: { k: '2' } });
    expect(replaced.data).toEqual({ k: '2' });
    // `a` still carries the version it was read at: the replace is conditional on it.
    expect((await failure(admin.replace(ConfigMap, { ...a, data: { k: '3' } }))).reason).toBe('Conflict');
    await admin.delete(ConfigMap, key('b'));
    expect((await failure(admin.get(ConfigMap, key('b')))).reason).toBe('NotFound');
  });

  it('merge and json patches; status().patch writes only the status subresource', async () => {
    await admin.create(ConfigMap, cm('p', { a: '1', b: '2' }));
    const merged = await admin.patch(ConfigMap, key('p'), {
      type: 'merge',
      patch: { data: { a: null, c: '3' } },
    });
    expect(merged.data).toEqual({ b: '2', c: '3' });
    const jsonPatched = await admin.patch(ConfigMap, key('p'), {
      type: 'json',
      patch: [
        { op: 'test', path: '/data/b', value: '2' },
        { op: 'replace', path: '/data/b', value: '20' },
      ],
    });
    expect(jsonPatched.data).toEqual({ b: '20', c: '3' });
    const failedTest = await failure(
      admin.patch(ConfigMap, key('p'), {
        type: 'json',
        patch: [{ op: 'test', path: '/data/b', value: 'x' }],
      }),
    );
    expect(failedTest.code).toBe(422);

    const q = await admin.create(Kinds.Query, queryObject(ns, 'status-q') as Query);
    const patch = { status: { phase: 'running' }, spec: { input: 'ignored on /status' } };
    const withStatus = await admin.status().patch(Kinds.Query, key('status-q'), { type: 'merge', patch });
    expect(withStatus.status?.phase).toBe('running');
    expect(withStatus.spec.input).toBe(q.spec.input);
    // Through the object, status is ignored (a subresource).
    const viaObject = await admin.patch(Kinds.Query, key('status-q'), {
      type: 'merge',
      patch: { status: { phase: 'done' } },
    });
    expect(viaObject.status?.phase).toBe('running');
  });

  it('delete with a uid precondition answers 409 for another object of the same name', async () => {
    const old = await admin.create(ConfigMap, cm('reborn'));
    await admin.delete(ConfigMap, key('reborn'));
    await admin.create(ConfigMap, cm('reborn'));
    const stale = await failure(
      admin.delete(ConfigMap, key('reborn'), { preconditions: { uid: old.metadata?.uid } }),
    );
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(await admin.get(ConfigMap, key('reborn'))).toBeTruthy();
    const current = await admin.get(ConfigMap, key('reborn'));
    await admin.delete(ConfigMap, key('reborn'), { preconditions: { uid: current.metadata?.uid } });
    expect((await failure(admin.get(ConfigMap, key('reborn')))).reason).toBe('NotFound');
  });

  it('apply under a field manager; a field another manager owns is a 409 naming it unless forced', async () => {
    const applied = await admin.apply(ConfigMap, cm('ssa', { k: 'v' }), { fieldManager: 'manager-a' });
    expect(applied.metadata?.managedFields?.map((f) => `${f.manager}:${f.operation}`)).toEqual([
      'manager-a:Apply',
    ]);
    const conflict = await failure(
      admin.apply(ConfigMap, cm('ssa', { k: 'w' }), { fieldManager: 'manager-b', force: false }),
    );
    expect(conflict.reason).toBe('Conflict');
    expect(conflict.causes).toEqual([
      expect.objectContaining({
        reason: 'FieldManagerConflict',
        field: '.data.k',
        message: expect.stringContaining('"manager-a"'),
      }),
    ]);
    const forced = await admin.apply(ConfigMap, cm('ssa', { k: 'w' }), {
      fieldManager: 'manager-b',
      force: true,
    });
    expect(forced.data).toEqual({ k: 'w' });
  });

  it('maps failures to KubeError reasons: NotFound, AlreadyExists, Conflict, Invalid', async () => {
    expect(await failure(admin.get(ConfigMap, key('missing')))).toMatchObject({
      code: 404,
      reason: 'NotFound',
    });
    await admin.create(ConfigMap, cm('twice'));
    expect(await failure(admin.create(ConfigMap, cm('twice')))).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
    });
    const stale = { ...cm('twice', { k: '1' }), metadata: { ...cm('twice').metadata, resourceVersion: '1' } };
    expect(await failure(admin.replace(ConfigMap, stale))).toMatchObject({ code: 409, reason: 'Conflict' });
    const invalid = await failure(admin.create(ConfigMap, cm('Not_A_Name')));
    expect(invalid).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(invalid.status.details?.causes?.[0]?.field).toBe('metadata.name');
  });
});

describe('HttpClient.as (impersonation)', () => {
  const alice = (...groups: string[]): Client => admin.as({ user: 'alice', groups });

  beforeAll(async () => {
    // g1 may read ConfigMaps, g2 may read Secrets: a request must carry both groups to do both.
    for (const [name, resource, group] of [
      ['read-configmaps', 'configmaps', 'g1'],
      ['read-secrets', 'secrets', 'g2'],
    ] as const) {
      const rules = [{ apiGroups: [''], resources: [resource], verbs: ['get', 'list'] }];
      await admin.create(Role, { metadata: { name, namespace: ns }, rules });
      await admin.create(RoleBinding, {
        metadata: { name, namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
      });
    }
  });

  it('the API server sees the impersonated user with every group', async () => {
    const review = await alice('g1', 'g2').create(SelfSubjectReview, {} as Review);
    expect(review.status?.userInfo?.username).toBe('alice');
    expect(review.status?.userInfo?.groups).toEqual(expect.arrayContaining(['g1', 'g2']));
  });

  it('is authorized by the RBAC of both groups; without a group its rights are gone', async () => {
    const both = alice('g1', 'g2');
    expect((await both.list(ConfigMap, { namespace: ns })).items.length).toBeGreaterThan(0);
    await both.list(CoreKinds.Secret, { namespace: ns });
    expect(await failure(alice('g1').list(CoreKinds.Secret, { namespace: ns }))).toMatchObject({
      code: 403,
      reason: 'Forbidden',
    });
    expect((await failure(alice('g2').list(ConfigMap, { namespace: ns }))).reason).toBe('Forbidden');
    const nobody = admin.as({ user: 'bob' });
    expect((await failure(nobody.get(ConfigMap, key('a')))).reason).toBe('Forbidden');
  });
});
