/**
 * POST …/approvals under attack (issue 30 item 7), on the real API server: a Query made to wait by
 * hand in a namespace no controller watches (so nothing decides behind the test's back), and the
 * real API service in open, basic and confined set-ups. Deadlines, approvers, another namespace,
 * wrong types, unknown fields, deep and huge bodies, prototype keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthScheme, Kinds, type PendingApproval, type Query } from '../../pkg/api/index.ts';
import { startGatewayServer } from '../../pkg/gateway/server.ts';
import { createClient } from '../../pkg/kube/client/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { decide, obj } from './support.ts';

let p: Platform;
let other: string;
let basic: string;
let confined: { url: string; close(): Promise<void> };
let keyAuth: Record<string, string>;
let publicKey: string;
const admin = createClient({ kc: kubeConfig('admin'), scheme: berthScheme() });

const minute = 60_000;
function pendingOf(id: string, extra: Partial<PendingApproval> = {}): PendingApproval {
  const now = Date.now();
  return {
    id,
    type: 'tool',
    tool: 'danger',
    arguments: { target: 'db' },
    inputSchema: {
      type: 'object',
      properties: { target: { type: 'string' } },
      required: ['target'],
      additionalProperties: false,
    },
    requestedAt: new Date(now - minute).toISOString(),
    deadline: new Date(now + 10 * minute).toISOString(),
    timeout: '10m',
    onTimeout: 'reject',
    ...extra,
  };
}

/** A Query in `other` that waits for `pending` (status written as the controller would). */
async function waitingQuery(name: string, pending: PendingApproval[]): Promise<void> {
  await admin.create(
    Kinds.Query,
    obj('Query', name, other, { input: 'x', target: { type: 'tool', name: 'danger' } }) as Query,
  );
  await admin.status().patch(
    Kinds.Query,
    { namespace: other, name },
    {
      type: 'merge',
      patch: { status: { phase: 'input-required', pendingApprovals: pending, checkpoint: { v: 1 } } },
    },
  );
}

beforeAll(async () => {
  [p, other] = await Promise.all([startPlatform('approvals-api'), createNamespace('approvals-other')]);
  basic = (await p.startApi({ env: { AUTH_MODE: 'basic' } })).url;
  confined = await startGatewayServer({
    kc: kubeConfig('gateway'),
    namespace: p.ns,
    confined: true,
    cache: p.cache,
    logger: createLogger({ level: 'silent' }),
    port: 0,
    host: '127.0.0.1',
    env: { AUTH_MODE: 'open' },
  });
  const res = await fetch(`${p.api.url}/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'approver' }),
  });
  const k = await res.json();
  publicKey = k.public_key;
  keyAuth = { authorization: `Basic ${Buffer.from(`${k.public_key}:${k.secret_key}`).toString('base64')}` };
  await waitingQuery('w-main', [
    pendingOf('aaaaaaaaaa'),
    pendingOf('bbbbbbbbbb', { deadline: new Date(Date.now() - 1000).toISOString() }),
    pendingOf('cccccccccc', { approvers: ['group:ops'] }),
    pendingOf('dddddddddd', { approvers: ['placeholder'] }),
  ]);
});

afterAll(async () => {
  await confined?.close();
  await p?.stop();
});

describe('refused decisions', () => {
  it('after the deadline → 409 approval_expired naming onTimeout', async () => {
    const r = await decide(p.api.url, other, 'w-main', { id: 'bbbbbbbbbb', decision: 'approve' });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('approval_expired');
    expect(r.body.error?.message).toMatch(/onTimeout reject applies/);
  });

  it('a caller not among the approvers → 403; a listed API key → 200 recorded with its public key', async () => {
    const anon = await decide(p.api.url, other, 'w-main', { id: 'cccccccccc', decision: 'approve' });
    expect(anon.status).toBe(403);
    expect(anon.body.error?.code).toBe('approval_forbidden');
    const keyed = await decide(basic, other, 'w-main', { id: 'cccccccccc', decision: 'approve' }, keyAuth);
    expect(keyed.status).toBe(403);
    await admin.status().patch(
      Kinds.Query,
      { namespace: other, name: 'w-main' },
      {
        type: 'json',
        patch: [{ op: 'replace', path: '/status/pendingApprovals/3/approvers', value: [publicKey] }],
      },
    );
    const ok = await decide(
      basic,
      other,
      'w-main',
      { id: 'dddddddddd', decision: 'reject', reason: 'mine' },
      keyAuth,
    );
    expect(ok.status).toBe(200);
    expect(ok.body.status?.approvals?.at(-1)).toMatchObject({ id: 'dddddddddd', by: publicKey, via: 'api' });
    const noKey = await decide(basic, other, 'w-main', { id: 'aaaaaaaaaa', decision: 'approve' });
    expect(noKey.status).toBe(401);
  });

  it('another namespace on an instance confined to its own → 403, and the Query is untouched', async () => {
    const r = await decide(confined.url, other, 'w-main', { id: 'aaaaaaaaaa', decision: 'approve' });
    expect(r.status).toBe(403);
    const q = await admin.get(Kinds.Query, { namespace: other, name: 'w-main' });
    expect(q.status?.approvals?.some((a) => a.id === 'aaaaaaaaaa')).toBeFalsy();
  });

  it('wrong types, unknown fields, bad ids and names → 400 listing the issues', async () => {
    const cases: unknown[] = [
      { id: 'aaaaaaaaaa', decision: 'yes' },
      { id: 5, decision: 'approve' },
      { id: 'aaaaaaaaaa', decision: 'approve', extra: true },
      { id: '../../etc', decision: 'approve' },
      { id: 'aaaaaaaaaa', decision: 'approve', arguments: ['not', 'an', 'object'] },
      { id: 'aaaaaaaaaa', decision: 'reject', reason: 'r'.repeat(5000) },
      { decision: 'approve' },
      null,
    ];
    for (const body of cases) {
      const r = await decide(p.api.url, other, 'w-main', body);
      expect(r.status, JSON.stringify(body)?.slice(0, 80)).toBe(400);
      expect(r.body.error?.code).toBe('invalid_request');
    }
    const badName = await decide(p.api.url, other, 'Not_A_Name', { id: 'aaaaaaaaaa', decision: 'approve' });
    expect(badName.status).toBe(400);
    const notJson = await decide(p.api.url, other, 'w-main', undefined, {}, '{"id": "aaaaaaaaaa",');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error?.code).toBe('invalid_json');
  });

  it('deep JSON → 400 json_too_deep; a body over the limit → 413; large arguments → 422', async () => {
    const deep = `{"id":"aaaaaaaaaa","decision":"approve","arguments":{"a":${'['.repeat(200)}${']'.repeat(200)}}}`;
    const r = await decide(p.api.url, other, 'w-main', undefined, {}, deep);
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe('json_too_deep');
    // A small body limit, as the contract test does: a 10 MiB upload races the early 413 (a reset).
    const small = await startGatewayServer({
      kc: kubeConfig('gateway'),
      namespace: p.ns,
      cache: p.cache,
      logger: createLogger({ level: 'silent' }),
      port: 0,
      host: '127.0.0.1',
      env: { AUTH_MODE: 'open' },
      bodyLimitBytes: 4096,
    });
    try {
      const big = await decide(small.url, other, 'w-main', {
        id: 'aaaaaaaaaa',
        decision: 'approve',
        reason: 'x'.repeat(8000),
      });
      expect(big.status).toBe(413);
      expect(big.body.error?.code).toBe('payload_too_large');
    } finally {
      await small.close();
    }
    const large = await decide(p.api.url, other, 'w-main', {
      id: 'aaaaaaaaaa',
      decision: 'approve',
      arguments: { target: 'y'.repeat(70 * 1024) },
    });
    expect(large.status).toBe(422);
    expect(large.body.error?.code).toBe('invalid_arguments');
  });

  it('prototype keys in arguments pollute nothing and never pass the schema as a hidden field', async () => {
    const raw =
      '{"id":"aaaaaaaaaa","decision":"approve","arguments":{"target":"t1","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}';
    const r = await decide(p.api.url, other, 'w-main', undefined, {}, raw);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // additionalProperties: false refuses keys the schema does not name, whatever their name.
    expect(r.status).toBe(422);
    expect(r.body.error?.code).toBe('invalid_arguments');
  });

  it('the first valid decision wins; the same id again → 409 with the recorded decision', async () => {
    const ok = await decide(p.api.url, other, 'w-main', {
      id: 'aaaaaaaaaa',
      decision: 'approve',
      arguments: { target: 'edited' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.status?.approvals?.find((a) => a.id === 'aaaaaaaaaa')).toMatchObject({
      decision: 'approve',
      by: 'anonymous',
      arguments: { target: 'edited' },
    });
    const again = await decide(p.api.url, other, 'w-main', { id: 'aaaaaaaaaa', decision: 'reject' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: 'approval_already_decided',
      details: { decision: { decision: 'approve' } },
    });
  });
});
