import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../http/index.ts';
import { isPaged, pageOf, pageQuery } from './list-page.ts';

const obj = (name: string, created: string): KubernetesObject => ({
  metadata: { name, creationTimestamp: created as unknown as Date },
});
// b and c share a timestamp: the name breaks the tie.
const all = [
  obj('c', '2026-01-02T00:00:00Z'),
  obj('a', '2026-01-03T00:00:00Z'),
  obj('b', '2026-01-02T00:00:00Z'),
  obj('d', '2026-01-01T00:00:00Z'),
];
const names = (p: { items: KubernetesObject[] }) => p.items.map((o) => o.metadata?.name);
const q = (raw: Record<string, string>) => pageQuery.parse(raw);

describe('list pages', () => {
  it('sorts by name or creation, either way, and pages with a keyset token', () => {
    expect(names(pageOf(all, q({ sort: 'name' })))).toEqual(['a', 'b', 'c', 'd']);
    expect(names(pageOf(all, q({ sort: '-name' })))).toEqual(['d', 'c', 'b', 'a']);
    expect(names(pageOf(all, q({ sort: 'created' })))).toEqual(['d', 'b', 'c', 'a']);
    const first = pageOf(all, q({ sort: '-created', limit: '2' }));
    expect(names(first)).toEqual(['a', 'c']);
    expect(first.total).toBe(4);
    const second = pageOf(all, q({ sort: '-created', limit: '2', continue: first.continue as string }));
    expect(names(second)).toEqual(['b', 'd']);
    expect(second.continue).toBeUndefined();
  });

  it('keeps its place when objects come and go between pages', () => {
    const first = pageOf(all, q({ limit: '2' }));
    const changed = [...all.filter((o) => o.metadata?.name !== 'a'), obj('aa', '2026-01-05T00:00:00Z')];
    expect(names(pageOf(changed, q({ limit: '2', continue: first.continue as string })))).toEqual(['c', 'd']);
  });

  it('filters by name; only the four parameters make a list paged', () => {
    expect(names(pageOf([...all, obj('ab', 'x')], q({ q: 'a' })))).toEqual(['a', 'ab']);
    expect(isPaged(q({}))).toBe(false);
    expect(isPaged(q({ q: '' }))).toBe(true);
  });

  it('refuses bad limits and forged, foreign or mismatched tokens with a 400', () => {
    for (const limit of ['0', '1001', '-1', '1.5', 'x', '99999'])
      expect(pageQuery.safeParse({ limit }).success, limit).toBe(false);
    expect(pageQuery.safeParse({ sort: 'uid' }).success).toBe(false);
    expect(pageQuery.safeParse({ continue: 'x'.repeat(3000) }).success).toBe(false);
    const token = pageOf(all, q({ limit: '1' })).continue as string;
    const forged = [
      'not-base64-json',
      Buffer.from('{"k": "a"}').toString('base64url'),
      Buffer.from('{"k": [1, 2], "s": "name", "q": ""}').toString('base64url'),
      Buffer.from('{"__proto__": {"k": ["a", "a"]}, "s": "name", "q": ""}').toString('base64url'),
      Buffer.from('null').toString('base64url'),
    ];
    for (const c of forged) expect(() => pageOf(all, q({ continue: c })), c).toThrow(HttpError);
    expect(() => pageOf(all, q({ continue: token, sort: '-name' }))).toThrow(/another sort or q/);
    expect(() => pageOf(all, q({ continue: token, q: 'a' }))).toThrow(/another sort or q/);
  });
});
