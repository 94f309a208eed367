/**
 * The claim that makes a resumption happen once (pkg/controller/query/waiting.ts), against the real
 * API server: two reconcilers (two controllers in a split brain, or one on a stale cache) hold the
 * same decided, waiting Query at the same resourceVersion; each claims it. Exactly one gets the
 * Query back to resume; the other gets a Conflict (requeued, it then sees `running`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { berthScheme, Kinds, type Query } from '../../pkg/api/index.ts';
import { tendWaiting } from '../../pkg/controller/query/waiting.ts';
import { createClient, isConflict } from '../../pkg/kube/client/index.ts';
import { EventRecorder } from '../../pkg/kube/events.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { obj } from './support.ts';

let ns: string;
const admin = createClient({ kc: kubeConfig('admin'), scheme: berthScheme() });
const controller = createClient({ kc: kubeConfig('controller'), scheme: berthScheme() });
const deps = {
  client: controller,
  recorder: new EventRecorder(controller, 'test', 'test'),
  log: createLogger({ level: 'silent' }),
  signal: new AbortController().signal,
};
const soon = () => new Date(Date.now() + 10 * 60_000).toISOString();

async function waitingQuery(name: string, decided: boolean): Promise<Query> {
  await admin.create(
    Kinds.Query,
    obj('Query', name, ns, { input: 'x', target: { type: 'tool', name: 't' } }) as Query,
  );
  const pending = {
    id: 'p1',
    type: 'tool',
    tool: 't',
    requestedAt: soon(),
    deadline: soon(),
    timeout: '10m',
    onTimeout: 'reject',
  };
  const approvals = decided ? [{ id: 'p1', decision: 'approve', by: 'ann', via: 'api', at: soon() }] : [];
  return admin.status().patch(
    Kinds.Query,
    { namespace: ns, name },
    {
      type: 'merge',
      patch: {
        status: { phase: 'input-required', pendingApprovals: [pending], approvals, checkpoint: { v: 1 } },
      },
    },
  );
}

beforeAll(async () => {
  ns = await createNamespace('approvals-claim');
});

describe('claiming a decided waiting Query', () => {
  it('two claims on the same version: one resumes, the other is a Conflict', async () => {
    const q = await waitingQuery('twice', true);
    const results = await Promise.allSettled([tendWaiting(q, deps), tendWaiting(q, deps)]);
    const resumed = results.filter((r) => r.status === 'fulfilled' && r.value.kind === 'resume');
    const conflicts = results.filter((r) => r.status === 'rejected' && isConflict(r.reason));
    expect(resumed).toHaveLength(1);
    expect(conflicts).toHaveLength(1);
    const now = await admin.get(Kinds.Query, { namespace: ns, name: 'twice' });
    expect(now.status?.phase).toBe('running');
    expect(now.status?.conditions?.find((c) => c.type === 'InputRequired')).toMatchObject({
      status: 'False',
      reason: 'Decided',
    });
    // A reconciler that still holds the old version cannot claim it again later either.
    await expect(tendWaiting(q, deps)).rejects.toSatisfy(isConflict);
  });

  it('an undecided Query is not claimed: it waits until its deadline', async () => {
    const q = await waitingQuery('undecided', false);
    const step = await tendWaiting(q, deps);
    expect(step.kind).toBe('wait');
    expect(step.kind === 'wait' && step.requeueAfterMs).toBeGreaterThan(9 * 60_000);
  });

  it('a deadline passed: the timeout decision is recorded first, once', async () => {
    const q = await waitingQuery('late', false);
    const late = await admin.status().patch<Query>(
      Kinds.Query,
      { namespace: ns, name: 'late' },
      {
        type: 'json',
        patch: [
          {
            op: 'replace',
            path: '/status/pendingApprovals/0/deadline',
            value: new Date(Date.now() - 1000).toISOString(),
          },
        ],
      },
    );
    expect(q.metadata.resourceVersion).not.toBe(late.metadata.resourceVersion);
    const results = await Promise.allSettled([tendWaiting(late, deps), tendWaiting(late, deps)]);
    expect(results.filter((r) => r.status === 'fulfilled' && r.value.kind === 'recorded')).toHaveLength(1);
    const now = await admin.get(Kinds.Query, { namespace: ns, name: 'late' });
    expect(now.status?.approvals).toEqual([
      expect.objectContaining({
        id: 'p1',
        decision: 'reject',
        via: 'timeout',
        by: 'system:approval-timeout',
      }),
    ]);
  });
});
