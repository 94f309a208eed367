import { describe, expect, it } from 'vitest';
import type { Client } from '../../kube/client/types.ts';
import type { SelfSubjectAccessReview } from '../../kube/kinds.ts';
import { ANSWER_TTL_MS, ImpersonableGroups, MAX_GROUPS } from './impersonable.ts';

/** An API server that allows impersonating `allowed` groups and counts the reviews asked. */
function reviewer(allowed: Set<string>, fail = new Set<string>()) {
  const asked: string[] = [];
  const client = {
    async create(_ref: unknown, review: SelfSubjectAccessReview) {
      const { verb, resource, name = '' } = review.spec.resourceAttributes;
      expect([verb, resource]).toEqual(['impersonate', 'groups']);
      asked.push(name);
      if (fail.has(name)) throw new Error('review failed');
      return { ...review, status: { allowed: allowed.has(name) } };
    },
  } as unknown as Client;
  return { client, asked };
}

describe('ImpersonableGroups', () => {
  it('keeps the groups the account may impersonate, drops the others, in order, once each', async () => {
    const { client } = reviewer(new Set(['editors', 'viewers']));
    const gate = new ImpersonableGroups(client);
    expect(await gate.filter(['viewers', 'system:masters', 'unlisted', 'editors', 'viewers'])).toEqual([
      'viewers',
      'editors',
    ]);
    expect(await gate.filter([])).toEqual([]);
  });

  it('asks once per group within the TTL, and again after it', async () => {
    let now = 1_000;
    const { client, asked } = reviewer(new Set(['editors']));
    const gate = new ImpersonableGroups(client, () => now);
    await Promise.all([gate.filter(['editors', 'other']), gate.filter(['editors'])]);
    await gate.filter(['editors', 'other']);
    expect(asked.sort()).toEqual(['editors', 'other']);
    now += ANSWER_TTL_MS;
    await gate.filter(['editors']);
    expect(asked.filter((g) => g === 'editors')).toHaveLength(2);
  });

  it('does not remember a failed review, and lets the failure reach the caller', async () => {
    const fail = new Set(['flaky']);
    const { client, asked } = reviewer(new Set(['flaky']), fail);
    const gate = new ImpersonableGroups(client);
    await expect(gate.filter(['flaky'])).rejects.toThrow('review failed');
    fail.clear();
    expect(await gate.filter(['flaky'])).toEqual(['flaky']);
    expect(asked).toEqual(['flaky', 'flaky']);
  });

  it(`considers at most ${MAX_GROUPS} groups of one identity (fewer groups, fewer rights)`, async () => {
    const many = Array.from({ length: 5000 }, (_, i) => `g${i}`);
    const { client, asked } = reviewer(new Set(many));
    const kept = await new ImpersonableGroups(client).filter(many);
    expect(kept).toEqual(many.slice(0, MAX_GROUPS));
    expect(asked).toHaveLength(MAX_GROUPS);
  });
});
