import { describe, expect, it } from 'vitest';
import type { PendingApproval } from '../../api/index.ts';
import { annotationDecision } from './waiting.ts';

const now = new Date('2026-01-01T00:00:00Z');
const pending = (type: 'tool' | 'question'): PendingApproval => ({
  id: 'abc',
  type,
  tool: type === 'tool' ? 'wipe' : 'ask_user',
  requestedAt: now.toISOString(),
  deadline: now.toISOString(),
  timeout: '10m',
  onTimeout: 'reject',
});

describe('kubectl decisions (berth.dev/approval-<id>)', () => {
  it('reads approve, approve:<answer>, reject and reject:<reason>', () => {
    expect(annotationDecision(pending('tool'), 'approve', now)).toEqual({
      id: 'abc',
      decision: 'approve',
      by: 'annotation',
      via: 'annotation',
      at: now.toISOString(),
    });
    expect(annotationDecision(pending('tool'), ' Reject : not today ', now)).toMatchObject({
      decision: 'reject',
      reason: 'not today',
    });
    expect(annotationDecision(pending('question'), 'approve:March: the 3rd', now)).toMatchObject({
      decision: 'approve',
      answer: 'March: the 3rd',
    });
    expect(annotationDecision(pending('question'), 'reject', now)).toMatchObject({ decision: 'reject' });
  });

  it('refuses what is not a decision, and a question approved without an answer', () => {
    expect(annotationDecision(pending('tool'), 'yes', now)).toHaveProperty('problem');
    expect(annotationDecision(pending('question'), 'approve', now)).toHaveProperty('problem');
    const long = annotationDecision(pending('tool'), `reject:${'x'.repeat(5000)}`, now);
    expect('reason' in long && long.reason?.length).toBe(1024);
  });
});
