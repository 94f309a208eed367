import { describe, expect, it } from 'vitest';
import { parseSeed, sourceValue } from './seed.ts';

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
