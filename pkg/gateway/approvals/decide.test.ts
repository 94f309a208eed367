import { describe, expect, it } from 'vitest';
import type { Query } from '../../api/index.ts';
import type { Principal } from '../../auth/index.ts';
import { HttpError } from '../../http/index.ts';
import { decide, mayDecide } from './decide.ts';

const now = new Date('2026-01-01T00:00:00Z');
const later = '2026-01-01T00:10:00Z';
const user = (name: string, groups: string[] = []): Principal => ({ kind: 'user', name, groups, claims: {} });

function waiting(extra: Record<string, unknown> = {}): Query {
  return {
    apiVersion: 'berth.dev/v1alpha1',
    kind: 'Query',
    metadata: { name: 'q', namespace: 'ns' },
    spec: { input: 'x', target: { type: 'agent', name: 'a' }, ttl: '1h', timeout: '5m', cancel: false },
    status: {
      phase: 'input-required',
      pendingApprovals: [
        {
          id: 't1',
          type: 'tool',
          tool: 'wipe',
          requestedAt: now.toISOString(),
          deadline: later,
          timeout: '10m',
          onTimeout: 'reject',
          ...extra,
        },
        {
          id: 'q1',
          type: 'question',
          tool: 'ask_user',
          question: '?',
          requestedAt: now.toISOString(),
          deadline: later,
          timeout: '10m',
          onTimeout: 'reject',
        },
      ],
    },
  };
}

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof HttpError ? err.code : String(err);
  }
  return 'none';
};

describe('decide', () => {
  it('records the caller, the time and what the body says', () => {
    expect(decide(waiting(), { id: 't1', decision: 'reject', reason: 'no' }, user('ann'), now)).toEqual({
      id: 't1',
      decision: 'reject',
      by: 'ann',
      via: 'api',
      at: now.toISOString(),
      reason: 'no',
    });
    expect(
      decide(waiting(), { id: 'q1', decision: 'approve', answer: 'March' }, undefined, now),
    ).toMatchObject({
      by: 'anonymous',
      answer: 'March',
    });
  });

  it('says why a decision cannot be taken', () => {
    const q = waiting();
    expect(codeOf(() => decide(q, { id: 'zz', decision: 'approve' }, undefined, now))).toBe(
      'approval_not_found',
    );
    expect(codeOf(() => decide(q, { id: 'q1', decision: 'approve' }, undefined, now))).toBe(
      'invalid_decision',
    );
    expect(
      codeOf(() => decide(q, { id: 'q1', decision: 'approve', answer: 'a', arguments: {} }, undefined, now)),
    ).toBe('invalid_decision');
    expect(codeOf(() => decide(q, { id: 't1', decision: 'approve', answer: 'a' }, undefined, now))).toBe(
      'invalid_decision',
    );
    expect(codeOf(() => decide(q, { id: 't1', decision: 'reject', arguments: {} }, undefined, now))).toBe(
      'invalid_decision',
    );
    expect(codeOf(() => decide(q, { id: 't1', decision: 'approve' }, undefined, new Date(later)))).toBe(
      'approval_expired',
    );
    const done = { ...q, status: { ...q.status, phase: 'done' as const } };
    expect(codeOf(() => decide(done, { id: 't1', decision: 'approve' }, undefined, now))).toBe(
      'query_not_waiting',
    );
    const decided = {
      ...q,
      status: { ...q.status, approvals: [{ id: 't1', decision: 'approve' as const, by: 'b', at: 'x' }] },
    };
    expect(codeOf(() => decide(decided, { id: 't1', decision: 'reject' }, undefined, now))).toBe(
      'approval_already_decided',
    );
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false };
    const typed = waiting({ inputSchema: schema });
    expect(
      codeOf(() => decide(typed, { id: 't1', decision: 'approve', arguments: { n: 'x' } }, undefined, now)),
    ).toBe('invalid_arguments');
    expect(
      decide(typed, { id: 't1', decision: 'approve', arguments: { n: 2 } }, undefined, now).arguments,
    ).toEqual({ n: 2 });
  });

  it('lets only approvers decide a restricted approval: by name, by group, by the identity a key acts as', () => {
    expect(mayDecide(undefined, undefined)).toBe(true);
    expect(mayDecide(undefined, ['ann'])).toBe(false);
    expect(mayDecide(user('ann'), ['ann'])).toBe(true);
    expect(mayDecide(user('bob', ['ops']), ['group:ops'])).toBe(true);
    expect(mayDecide(user('bob', ['dev']), ['group:ops', 'ann'])).toBe(false);
    const key: Principal = {
      kind: 'api-key',
      name: 'pk-svc-1',
      publicKey: 'pk-svc-1',
      keyName: 'k',
      actsAs: { user: 'ann' },
    };
    expect(mayDecide(key, ['ann'])).toBe(true);
    expect(mayDecide(key, ['pk-svc-1'])).toBe(true);
    expect(
      codeOf(() =>
        decide(waiting({ approvers: ['ann'] }), { id: 't1', decision: 'approve' }, user('eve'), now),
      ),
    ).toBe('approval_forbidden');
  });
});
