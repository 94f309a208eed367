import type { V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { MARKETPLACE_SOURCES_CONFIGMAP } from '../../api/index.ts';
import { FakeClient } from '../../kube/client/fake.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';

const CONFIGMAP = CoreKinds.ConfigMap as KindRef<V1ConfigMap>;

import { readMap } from './store.ts';

const PROTOTYPE_NAMES = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__'];

describe('readMap', () => {
  it('finds no source named after an Object.prototype member when none was written', async () => {
    const client = new FakeClient();
    for (const name of PROTOTYPE_NAMES) expect((await readMap(client, 'ns')).data[name]).toBeUndefined();
    await client.create(CONFIGMAP, {
      metadata: { name: MARKETPLACE_SOURCES_CONFIGMAP, namespace: 'ns' },
      data: { real: '{"url":"https://example.com/m.json"}' },
    });
    const map = await readMap(client, 'ns');
    expect(map.exists).toBe(true);
    expect(map.data.real).toContain('example.com');
    for (const name of PROTOTYPE_NAMES) expect(map.data[name]).toBeUndefined();
  });

  it('keeps a source whose name is a prototype member as an ordinary key', async () => {
    const client = new FakeClient();
    await client.create(CONFIGMAP, {
      metadata: { name: MARKETPLACE_SOURCES_CONFIGMAP, namespace: 'ns' },
      data: JSON.parse('{"constructor":"{}","__proto__":"{}"}'),
    });
    const map = await readMap(client, 'ns');
    expect(Object.keys(map.data).sort()).toEqual(['__proto__', 'constructor']);
    expect(map.data.constructor).toBe('{}');
  });
});
