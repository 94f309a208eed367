/**
 * Issue 30 end to end on the real control plane: the controller with the real engine, the API
 * service and the broker in this process (test/compat/platform.ts), a fake model over HTTPS and a
 * fake HTTP tool. A tool call that needs approval pauses the Query (input-required, pending
 * approvals, InputRequired=True); decisions through POST …/approvals and kubectl annotations resume
 * it exactly once: approve, reject, edit, timeouts both ways, ask_user, teams, tool targets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Query } from '../../pkg/api/index.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { kubectl } from '../support/kube.ts';
import {
  agentWithModel,
  createQuery,
  dangerTool,
  decide,
  ended,
  lastToolMessage,
  obj,
  phaseIs,
  waiting,
  waitQuery,
} from './support.ts';

let p: Platform;
const finalReply = (req: { messages: Array<{ role: string; content?: string | null }> }) =>
  `final: ${req.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? 'none'}`;
const dangerCalls = (path = '/danger') => p.tools.calls.filter((c) => c.path === path);

beforeAll(async () => {
  p = await startPlatform('approvals');
  await p.apply(dangerTool(p));
  await p.apply(dangerTool(p, 'quick', { required: true, timeout: '1s', onTimeout: 'reject' }));
  await p.apply(dangerTool(p, 'lenient', { required: true, timeout: '1s', onTimeout: 'proceed' }));
  await p.apply(dangerTool(p, 'harmless', { required: false }));
});

afterAll(async () => {
  await p?.stop();
});

describe('a tool call that needs approval', () => {
  it('pauses the query; approve → the tool runs once and the query ends done', async () => {
    await agentWithModel(p, 'm-approve', { tools: [{ name: 'danger' }, { name: 'harmless' }] });
    p.fake.script('m-approve', {
      toolCall: { name: 'danger', arguments: '{"target":"users"}' },
      reply: finalReply,
    });
    await createQuery(p, 'q-approve', { input: 'drop users', target: { type: 'agent', name: 'm-approve' } });
    const { query, pending } = await waiting(p, 'q-approve');
    expect(pending).toHaveLength(1);
    const [a] = pending;
    expect(a).toMatchObject({
      type: 'tool',
      tool: 'danger',
      agent: 'm-approve',
      arguments: { target: 'users' },
    });
    expect(a?.id).toMatch(/^[0-9a-f]{10}$/);
    expect(Date.parse(a?.deadline ?? '') - Date.parse(a?.requestedAt ?? '')).toBe(10 * 60_000);
    expect(a?.inputSchema).toMatchObject({ required: ['target'] });
    expect(query.status?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'InputRequired', status: 'True' }),
        expect.objectContaining({ type: 'Completed', status: 'False', reason: 'InputRequired' }),
      ]),
    );
    expect(query.status?.checkpoint).toMatchObject({ v: 1 });
    expect(dangerCalls()).toHaveLength(0); // never without a decision

    const res = await decide(p.api.url, p.ns, 'q-approve', { id: a?.id, decision: 'approve' });
    expect(res.status).toBe(200);
    expect(res.body.status?.approvals).toEqual([
      expect.objectContaining({ id: a?.id, decision: 'approve', by: 'anonymous', via: 'api' }),
    ]);
    const done = await waitQuery(p, 'q-approve', ended);
    expect(done.status?.phase).toBe('done');
    expect(done.status?.response?.content).toContain('"path":"/danger"');
    expect(done.status?.pendingApprovals).toBeUndefined();
    expect(done.status?.checkpoint).toBeUndefined();
    expect(done.status?.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'InputRequired', status: 'False' })]),
    );
    expect(dangerCalls()).toHaveLength(1);
    expect(dangerCalls()[0]?.body).toEqual({ target: 'users' });
    // The second model call continued the same conversation: tool call, then the tool's answer.
    const second = p.fake.requests.filter((r) => r.model === 'm-approve').at(-1);
    expect(second?.messages.at(-2)?.tool_calls?.[0]?.function.name).toBe('danger');
  });

  it('reject → the tool is not run, the model is told who refused it and why, and goes on', async () => {
    await agentWithModel(p, 'm-reject', { tools: [{ name: 'danger' }] });
    p.fake.script('m-reject', {
      toolCall: { name: 'danger', arguments: '{"target":"orders"}' },
      reply: finalReply,
    });
    const before = dangerCalls().length;
    await createQuery(p, 'q-reject', { input: 'drop orders', target: { type: 'agent', name: 'm-reject' } });
    const { pending } = await waiting(p, 'q-reject');
    const res = await decide(p.api.url, p.ns, 'q-reject', {
      id: pending[0]?.id,
      decision: 'reject',
      reason: 'not on a Friday',
    });
    expect(res.status).toBe(200);
    const done = await waitQuery(p, 'q-reject', ended);
    expect(done.status?.phase).toBe('done');
    expect(lastToolMessage(p, 'm-reject')).toMatch(
      /refused: anonymous rejected this call of danger: not on a Friday/,
    );
    expect(dangerCalls().length).toBe(before);
    expect(done.status?.approvals?.[0]).toMatchObject({ decision: 'reject', reason: 'not on a Friday' });
  });

  it('approve with edited arguments → the tool gets them; arguments failing the schema → 422', async () => {
    await agentWithModel(p, 'm-edit', { tools: [{ name: 'danger' }] });
    p.fake.script('m-edit', {
      toolCall: { name: 'danger', arguments: '{"target":"everything"}' },
      reply: finalReply,
    });
    await createQuery(p, 'q-edit', { input: 'drop it all', target: { type: 'agent', name: 'm-edit' } });
    const { pending } = await waiting(p, 'q-edit');
    const id = pending[0]?.id;
    const bad = await decide(p.api.url, p.ns, 'q-edit', {
      id,
      decision: 'approve',
      arguments: { target: 'x' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error?.code).toBe('invalid_arguments');
    expect(bad.body.error?.message).toMatch(/\/target: must NOT have fewer than 2 characters/);
    const extra = await decide(p.api.url, p.ns, 'q-edit', {
      id,
      decision: 'approve',
      arguments: { target: 'temp', cascade: true },
    });
    expect(extra.status).toBe(422);
    const ok = await decide(p.api.url, p.ns, 'q-edit', {
      id,
      decision: 'approve',
      arguments: { target: 'temp' },
    });
    expect(ok.status).toBe(200);
    await waitQuery(p, 'q-edit', phaseIs('done'));
    expect(dangerCalls().at(-1)?.body).toEqual({ target: 'temp' });
  });

  it('timeout with onTimeout reject → refused at the deadline; with proceed → the tool runs', async () => {
    await agentWithModel(p, 'm-quick', { tools: [{ name: 'quick' }] });
    p.fake.script('m-quick', {
      toolCall: { name: 'quick', arguments: '{"target":"logs"}' },
      reply: finalReply,
    });
    await agentWithModel(p, 'm-lenient', { tools: [{ name: 'lenient' }] });
    p.fake.script('m-lenient', {
      toolCall: { name: 'lenient', arguments: '{"target":"cache"}' },
      reply: finalReply,
    });
    await createQuery(p, 'q-quick', { input: 'clear logs', target: { type: 'agent', name: 'm-quick' } });
    await createQuery(p, 'q-lenient', { input: 'clear cache', target: { type: 'agent', name: 'm-lenient' } });
    const [quick, lenient] = await Promise.all([
      waitQuery(p, 'q-quick', ended),
      waitQuery(p, 'q-lenient', ended),
    ]);
    expect(quick.status?.approvals?.[0]).toMatchObject({
      decision: 'reject',
      via: 'timeout',
      by: 'system:approval-timeout',
    });
    expect(lastToolMessage(p, 'm-quick')).toMatch(/nobody approved this call of quick in time/);
    expect(dangerCalls('/quick')).toHaveLength(0);
    expect(lenient.status?.approvals?.[0]).toMatchObject({ decision: 'approve', via: 'timeout' });
    expect(dangerCalls('/lenient')).toHaveLength(1);
    expect(lenient.status?.phase).toBe('done');
  });

  it('the agent entry overrides the Tool field by field; required false runs at once', async () => {
    await agentWithModel(p, 'm-override', { tools: [{ name: 'danger', approval: { required: false } }] });
    p.fake.script('m-override', {
      toolCall: { name: 'danger', arguments: '{"target":"tmp"}' },
      reply: finalReply,
    });
    await createQuery(p, 'q-override', { input: 'go', target: { type: 'agent', name: 'm-override' } });
    const q = await waitQuery(p, 'q-override', ended);
    expect(q.status?.phase).toBe('done');
    expect(q.status?.approvals).toBeUndefined();
  });

  it('kubectl annotation berth.dev/approval-<id> decides like the API', async () => {
    await agentWithModel(p, 'm-kubectl', { tools: [{ name: 'danger' }] });
    p.fake.script('m-kubectl', {
      toolCall: { name: 'danger', arguments: '{"target":"sessions"}' },
      reply: finalReply,
    });
    await createQuery(p, 'q-kubectl', {
      input: 'drop sessions',
      target: { type: 'agent', name: 'm-kubectl' },
    });
    const { pending } = await waiting(p, 'q-kubectl');
    const key = `berth.dev/approval-${pending[0]?.id}`;
    const r = await kubectl(['annotate', '-n', p.ns, 'query', 'q-kubectl', `${key}=reject:use the archive`]);
    expect(r.code, r.stderr).toBe(0);
    const done = await waitQuery(p, 'q-kubectl', ended);
    expect(done.status?.approvals?.[0]).toMatchObject({
      decision: 'reject',
      reason: 'use the archive',
      by: 'annotation',
      via: 'annotation',
    });
    expect(lastToolMessage(p, 'm-kubectl')).toMatch(/use the archive/);
  });
});

describe('ask_user', () => {
  it('puts the question in pendingApprovals; the answer goes to the model as the tool result', async () => {
    await agentWithModel(p, 'm-ask', { tools: [{ builtin: 'ask_user' }] });
    p.fake.script('m-ask', {
      toolCall: { name: 'ask_user', arguments: '{"question":"Which month?"}' },
      reply: finalReply,
    });
    await createQuery(p, 'q-ask', { input: 'clean up', target: { type: 'agent', name: 'm-ask' } });
    const { query, pending } = await waiting(p, 'q-ask');
    expect(pending[0]).toMatchObject({ type: 'question', tool: 'ask_user', question: 'Which month?' });
    expect(query.status?.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'InputRequired', reason: 'QuestionAsked' })]),
    );
    const tools = p.fake.requests.find((r) => r.model === 'm-ask')?.tools?.map((t) => t.function.name);
    expect(tools).toEqual(['ask_user']);
    const id = pending[0]?.id;
    const noAnswer = await decide(p.api.url, p.ns, 'q-ask', { id, decision: 'approve' });
    expect(noAnswer.status).toBe(422);
    expect(noAnswer.body.error?.code).toBe('invalid_decision');
    const res = await decide(p.api.url, p.ns, 'q-ask', { id, decision: 'approve', answer: 'March' });
    expect(res.status).toBe(200);
    const done = await waitQuery(p, 'q-ask', ended);
    expect(done.status?.response?.content).toBe('final: March');
  });
});

describe('other targets', () => {
  it('a team member pauses the team; after approval the next member sees the first one’s answer', async () => {
    await agentWithModel(p, 'm-first', { tools: [{ name: 'danger' }] });
    await agentWithModel(p, 'm-second');
    p.fake.script('m-first', {
      toolCall: { name: 'danger', arguments: '{"target":"a1"}' },
      reply: finalReply,
    });
    p.fake.script('m-second', { reply: (req) => `second saw ${req.messages.length} messages` });
    await p.apply(
      obj('Team', 't-pause', p.ns, {
        members: [
          { type: 'agent', name: 'm-first' },
          { type: 'agent', name: 'm-second' },
        ],
        strategy: 'sequential',
      }),
    );
    await createQuery(p, 'q-team', { input: 'work', target: { type: 'team', name: 't-pause' } });
    const { pending } = await waiting(p, 'q-team');
    expect(pending[0]?.agent).toBe('m-first');
    expect(
      (await decide(p.api.url, p.ns, 'q-team', { id: pending[0]?.id, decision: 'approve' })).status,
    ).toBe(200);
    const done = await waitQuery(p, 'q-team', ended);
    expect(done.status?.phase).toBe('done');
    const second = p.fake.requests.filter((r) => r.model === 'm-second').at(-1);
    expect(second?.messages.some((m) => m.role === 'assistant' && m.content?.startsWith('final: '))).toBe(
      true,
    );
  });

  it('a tool/<name> query of a Tool that needs approval waits; rejected → error Rejected', async () => {
    await createQuery(p, 'q-tool', { input: '{"target":"jobs"}', target: { type: 'tool', name: 'danger' } });
    const { pending } = await waiting(p, 'q-tool');
    expect(pending[0]).toMatchObject({ tool: 'danger', arguments: { target: 'jobs' } });
    await decide(p.api.url, p.ns, 'q-tool', { id: pending[0]?.id, decision: 'reject', reason: 'no' });
    const done = await waitQuery(p, 'q-tool', ended);
    expect(done.status?.phase).toBe('error');
    expect(done.status?.conditions?.find((c) => c.type === 'Completed')?.reason).toBe('Rejected');
    expect(done.status?.message).toMatch(/rejected it: no/);
  });

  it('cancel while waiting ends the query canceled, nothing of the paused turn runs', async () => {
    await agentWithModel(p, 'm-cancel', { tools: [{ name: 'danger' }] });
    p.fake.script('m-cancel', {
      toolCall: { name: 'danger', arguments: '{"target":"zz"}' },
      reply: finalReply,
    });
    await createQuery(p, 'q-cancel', { input: 'drop zz', target: { type: 'agent', name: 'm-cancel' } });
    await waiting(p, 'q-cancel');
    const r = await kubectl([
      'patch',
      '-n',
      p.ns,
      'query',
      'q-cancel',
      '--type=merge',
      '-p',
      '{"spec":{"cancel":true}}',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const done = await waitQuery(p, 'q-cancel', ended);
    expect(done.status?.phase).toBe('canceled');
    expect(p.tools.calls.filter((c) => (c.body as { target?: string })?.target === 'zz')).toHaveLength(0);
    const waitingAgain = await decide(p.api.url, p.ns, 'q-cancel', { id: 'abcdef0123', decision: 'approve' });
    expect(waitingAgain.status).toBe(409);
    expect(waitingAgain.body.error?.code).toBe('query_not_waiting');
  });
});

describe('decisions that cannot be taken', () => {
  it('twice → 409 with the recorded decision; two at once → exactly one wins', async () => {
    await agentWithModel(p, 'm-race', { tools: [{ name: 'danger' }] });
    p.fake.script('m-race', {
      toolCall: { name: 'danger', arguments: '{"target":"race"}' },
      reply: finalReply,
      delayMs: 300, // the second model call: the query is still running when the late decision comes
    });
    await createQuery(p, 'q-race', { input: 'race', target: { type: 'agent', name: 'm-race' } });
    const { pending } = await waiting(p, 'q-race');
    const id = pending[0]?.id;
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        decide(p.api.url, p.ns, 'q-race', { id, decision: i % 2 ? 'reject' : 'approve', reason: `r${i}` }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409))
      expect(['approval_already_decided', 'query_not_waiting']).toContain(a.body.error?.code);
    const done = await waitQuery(p, 'q-race', ended);
    expect(done.status?.approvals).toHaveLength(1);
    const again = await decide(p.api.url, p.ns, 'q-race', { id, decision: 'approve' });
    expect(again.status).toBe(409);
    expect(again.body.error?.code).toBe('approval_already_decided');
    expect(
      p.tools.calls.filter((c) => (c.body as { target?: string })?.target === 'race').length,
    ).toBeLessThanOrEqual(1);
  });

  it('unknown id → 404 listing the pending ones; a query not waiting → 409; no such query → 404', async () => {
    await agentWithModel(p, 'm-bad', { tools: [{ name: 'danger' }] });
    p.fake.script('m-bad', {
      toolCall: { name: 'danger', arguments: '{"target":"bad"}' },
      reply: finalReply,
    });
    await createQuery(p, 'q-bad', { input: 'x', target: { type: 'agent', name: 'm-bad' } });
    const { pending } = await waiting(p, 'q-bad');
    const unknown = await decide(p.api.url, p.ns, 'q-bad', { id: 'ffffffffff', decision: 'approve' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({
      code: 'approval_not_found',
      details: { pending: [pending[0]?.id] },
    });
    const answer = await decide(p.api.url, p.ns, 'q-bad', {
      id: pending[0]?.id,
      decision: 'approve',
      answer: 'hi',
    });
    expect(answer.status).toBe(422);
    const missing = await decide(p.api.url, p.ns, 'nope', { id: 'ffffffffff', decision: 'approve' });
    expect(missing.status).toBe(404);
    await decide(p.api.url, p.ns, 'q-bad', { id: pending[0]?.id, decision: 'reject' });
    const q: Query = await waitQuery(p, 'q-bad', ended);
    const late = await decide(p.api.url, p.ns, 'q-bad', { id: 'ffffffffff', decision: 'approve' });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'query_not_waiting' });
    expect(late.body.error?.message).toContain(`phase ${q.status?.phase}`);
  });
});
