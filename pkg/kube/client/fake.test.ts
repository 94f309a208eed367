import { describe, expect, it } from 'vitest';
import { KubeError } from '../errors.ts';
import { CoreKinds, kindRef } from '../kinds.ts';
import { FakeClient } from './fake.ts';
import { addFinalizer, ignoreNotFound, patchStatus, removeFinalizer } from './helpers.ts';

interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    finalizers?: string[];
  };
  spec: { size: number; tags?: string[] };
  status?: { phase?: string };
}
const Widget = kindRef<Widget>({
  group: 'test.dev',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
const w = (name: string, size = 1): Widget => ({ metadata: { name, namespace: 'ns' }, spec: { size } });
const reason = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: KubeError) => e.reason,
  );

describe('FakeClient', () => {
  it('stamps metadata on create and refuses a second object of the same name', async () => {
    const c = new FakeClient();
    const made = await c.create(Widget, w('a'));
    expect(made.metadata.uid).toBeTruthy();
    expect(made.metadata.resourceVersion).toBe('1');
    expect(made.apiVersion).toBe('test.dev/v1');
    expect(await reason(c.create(Widget, w('a')))).toBe('AlreadyExists');
    expect(await reason(c.get(Widget, { namespace: 'ns', name: 'b' }))).toBe('NotFound');
    expect(await ignoreNotFound(c.get(Widget, { namespace: 'ns', name: 'b' }))).toBeUndefined();
  });

  it('answers 409 to a write conditional on a stale resourceVersion', async () => {
    const c = new FakeClient();
    const v1 = await c.create(Widget, w('a'));
    const v2 = await c.replace(Widget, { ...v1, spec: { size: 2 } });
    expect(Number(v2.metadata.resourceVersion)).toBeGreaterThan(Number(v1.metadata.resourceVersion));
    expect(await reason(c.replace(Widget, { ...v1, spec: { size: 3 } }))).toBe('Conflict');
    const stale = { metadata: { resourceVersion: v1.metadata.resourceVersion }, spec: { size: 4 } };
    expect(
      await reason(c.patch(Widget, { namespace: 'ns', name: 'a' }, { type: 'merge', patch: stale })),
    ).toBe('Conflict');
    expect((await c.get(Widget, { namespace: 'ns', name: 'a' })).spec.size).toBe(2);
  });

  it('keeps status a subresource of custom kinds', async () => {
    const c = new FakeClient();
    const key = { namespace: 'ns', name: 'a' };
    const a = await c.create(Widget, { ...w('a'), status: { phase: 'ignored' } });
    expect(a.status).toBeUndefined();
    await c.patch(Widget, key, { type: 'merge', patch: { status: { phase: 'nope' } } });
    expect((await c.get(Widget, key)).status?.phase).not.toBe('nope');
    await patchStatus(c, Widget, a, { phase: 'done' });
    const got = await c.get(Widget, key);
    expect(got.status?.phase).toBe('done');
    expect(got.spec.size).toBe(1);
    expect(c.actions.map((x) => `${x.verb}${x.subresource ? `/${x.subresource}` : ''}`)).toEqual([
      'create',
      'patch',
      'patch/status',
    ]);
  });

  it('applies JSON patches, including a failed test op as 422', async () => {
    const c = new FakeClient();
    await c.create(Widget, { ...w('a'), spec: { size: 1, tags: ['x'] } });
    const key = { namespace: 'ns', name: 'a' };
    const out = await c.patch(Widget, key, {
      type: 'json',
      patch: [
        { op: 'test', path: '/spec/size', value: 1 },
        { op: 'replace', path: '/spec/size', value: 5 },
        { op: 'add', path: '/spec/tags/-', value: 'y' },
      ],
    });
    expect(out.spec).toEqual({ size: 5, tags: ['x', 'y'] });
    const failed = c.patch(Widget, key, {
      type: 'json',
      patch: [{ op: 'test', path: '/spec/size', value: 1 }],
    });
    expect(await reason(failed)).toBe('Invalid');
  });

  it('holds a deleted object while finalizers remain, then removes it with the last one', async () => {
    const c = new FakeClient();
    const a = await addFinalizer(c, Widget, await c.create(Widget, w('a')), 'test.dev/cleanup');
    expect(
      await reason(c.delete(Widget, { namespace: 'ns', name: 'a' }, { preconditions: { uid: 'other' } })),
    ).toBe('Conflict');
    const deleting = (await c.delete(Widget, { namespace: 'ns', name: 'a' })) as Widget;
    expect(deleting.metadata.finalizers).toEqual(['test.dev/cleanup']);
    const held = await c.get(Widget, { namespace: 'ns', name: 'a' });
    expect((held.metadata as { deletionTimestamp?: string }).deletionTimestamp).toBeTruthy();
    expect(await reason(removeFinalizer(c, Widget, a, 'test.dev/cleanup'))).toBe('Conflict'); // stale copy
    expect(await removeFinalizer(c, Widget, held, 'test.dev/cleanup')).toBeDefined();
    expect(await reason(c.get(Widget, { namespace: 'ns', name: 'a' }))).toBe('NotFound');
  });

  it('lists by namespace and label, records who acted, and injects failures', async () => {
    const c = new FakeClient();
    const s = (name: string, namespace: string, labels?: Record<string, string>) => ({
      metadata: { name, namespace, labels },
      type: 'Opaque',
    });
    await c.create(CoreKinds.Secret, s('a', 'x', { role: 'key' }));
    await c.create(CoreKinds.Secret, s('b', 'x'));
    await c.create(CoreKinds.Secret, s('c', 'y', { role: 'key' }));
    expect((await c.list(CoreKinds.Secret, { namespace: 'x' })).items).toHaveLength(2);
    const keys = await c.list(CoreKinds.Secret, { labelSelector: 'role=key' });
    expect(keys.items.map((i) => i.metadata?.name).sort()).toEqual(['a', 'c']);
    await c.as({ user: 'alice', groups: ['g'] }).delete(CoreKinds.Secret, { namespace: 'x', name: 'b' });
    expect(c.actions.at(-1)).toMatchObject({ verb: 'delete', name: 'b', identity: { user: 'alice' } });
    c.failNext('get', new KubeError(503, 'Unavailable', 'down'));
    expect(await reason(c.get(CoreKinds.Secret, { namespace: 'x', name: 'a' }))).toBe('Unavailable');
    expect((await c.get(CoreKinds.Secret, { namespace: 'x', name: 'a' })).metadata?.name).toBe('a');
  });
});
