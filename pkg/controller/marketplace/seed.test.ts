import type { V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FakeClient } from '../../kube/client/index.ts';
import { KubeError } from '../../kube/errors.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import { applySeed, parseSeed, sourceValue } from './seed.ts';

describe('parseSeed', () => {
  it('accepts a bare list or marketplaceSources, JSON or YAML', () => {
    expect(parseSeed('[{"name":"a","url":"https://x/m.json"}]', 't').entries).toHaveLength(1);
    expect(
      parseSeed('marketplaceSources:\n  - {name: a, url: "https://x/m.json", namespace: team}', 't')
        .entries[0]?.namespace,
    ).toBe('team');
  });

  it('rejects non-https or relative URLs and bad key names per entry, keeping the valid ones', () => {
    const r = parseSeed(
      [
        '- {name: ok, url: "https://x/m.json"}',
        '- {name: plain, url: "http://x/m.json"}',
        '- {name: rel, url: "/m.json"}',
        '- {name: "bad/name", url: "https://x"}',
      ].join('\n'),
      'seed.yaml',
    );
    expect(r.entries.map((e) => e.name)).toEqual(['ok']);
    expect(r.errors).toHaveLength(3);
    expect(r.errors[0]).toBe('seed.yaml[1]: url must be an absolute https URL');
    expect(r.errors[2]).toMatch(/name must be a ConfigMap key/);
  });

  it('an empty document or list seeds nothing; a non-list is an error', () => {
    expect(parseSeed('', 't')).toEqual({ entries: [], errors: [] });
    expect(parseSeed('marketplaceSources: []', 't')).toEqual({ entries: [], errors: [] });
    expect(() => parseSeed('marketplaceSources: {a: 1}', 't')).toThrow(/expected a list/);
  });

  it('stores url, displayName and auth, never the namespace or name', () => {
    const [e] = parseSeed(
      '- {name: a, url: "https://x", displayName: A, namespace: n, auth: {scheme: basic, secretRef: s}}',
      't',
    ).entries;
    expect(JSON.parse(sourceValue(e!))).toEqual({
      url: 'https://x',
      displayName: 'A',
      auth: { scheme: 'basic', secretRef: 's' },
    });
  });
});

describe('applySeed', () => {
  const entries = parseSeed(
    '- {name: official, url: "https://x/v2.json"}\n- {name: private, url: "https://p/v2.json", namespace: team}\n- {name: extra, url: "https://e/m.json"}',
    't',
  ).entries;
  /** What the API server answers an apply (force=false) touching a key kubectl changed. */
  const conflict = new KubeError(409, 'Conflict', 'Apply failed with 1 conflict', {
    kind: 'Status',
    reason: 'Conflict',
    code: 409,
    details: {
      causes: [
        {
          reason: 'FieldManagerConflict',
          message: 'conflict with "kubectl-patch" using v1',
          field: '.data.official',
        },
      ],
    },
  });

  it('groups entries by namespace and leaves a key another manager owns (named by the 409) alone', async () => {
    const client = new FakeClient();
    client.failNext('apply', conflict);
    const results = await applySeed(client, entries, 'home');
    expect(results.map((r) => `${r.namespace}/${r.name}:${r.result}`)).toEqual([
      'home/official:skipped',
      'home/extra:applied',
      'team/private:applied',
    ]);
    expect(results[0]?.ownedBy).toEqual(['kubectl-patch']);
    const cm = (ns: string) =>
      client.get(CoreKinds.ConfigMap as KindRef<V1ConfigMap>, { namespace: ns, name: 'marketplace-sources' });
    expect(Object.keys((await cm('home')).data ?? {})).toEqual(['extra']);
    expect(Object.keys((await cm('team')).data ?? {})).toEqual(['private']);
  });

  it('other failures are thrown; an empty list applies nothing', async () => {
    const client = new FakeClient();
    client.failNext('apply', new KubeError(403, 'Forbidden', 'no'));
    await expect(applySeed(client, entries, 'home')).rejects.toThrow('no');
    expect(await applySeed(client, [], 'home')).toEqual([]);
    expect(client.actions).toEqual([]);
  });
});
