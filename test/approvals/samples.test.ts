/**
 * The sample manifests/samples/approval.yaml on the demo model (what `berth up` shows offline): the
 * cleanup query waits for approval of delete-records, ask-first asks its question, extract answers
 * JSON that fits the Agent's outputSchema.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type Platform, startPlatform } from '../compat/platform.ts';
import { ROOT } from '../support/process.ts';
import { decide, ended, obj, waiting, waitQuery } from './support.ts';

let p: Platform;

beforeAll(async () => {
  p = await startPlatform('approval-samples');
  await p.apply(obj('Model', 'demo', p.ns, { type: 'demo', model: 'berth-demo' }));
  const docs = parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'samples', 'approval.yaml'), 'utf8'));
  for (const d of docs) {
    const o = d.toJS() as KubernetesObject;
    await p.apply({ ...o, metadata: { ...o.metadata, namespace: p.ns } });
  }
});

afterAll(async () => {
  await p?.stop();
});

describe('manifests/samples/approval.yaml on the demo model', () => {
  it('cleanup waits for approval of delete-records, then runs it', async () => {
    const { pending } = await waiting(p, 'cleanup');
    expect(pending[0]).toMatchObject({
      tool: 'delete-records',
      arguments: { records: 'the March invoices' },
      timeout: '30m',
    });
    expect(
      (await decide(p.api.url, p.ns, 'cleanup', { id: pending[0]?.id, decision: 'approve' })).status,
    ).toBe(200);
    const q = await waitQuery(p, 'cleanup', ended);
    expect(q.status?.response?.content).toContain('demo result of delete-records');
  });

  it('ask-first asks the user; the answer is what the model answers with', async () => {
    const { pending } = await waiting(p, 'ask-first');
    expect(pending[0]).toMatchObject({ type: 'question', question: 'which month should go?' });
    await decide(p.api.url, p.ns, 'ask-first', { id: pending[0]?.id, decision: 'approve', answer: 'March' });
    const q = await waitQuery(p, 'ask-first', ended);
    expect(q.status?.response?.content).toBe('[demo model] The tool answered: March');
  });

  it('extract answers JSON that satisfies the outputSchema', async () => {
    const q = await waitQuery(p, 'extract', ended);
    expect(q.status?.phase).toBe('done');
    expect(JSON.parse(q.status?.response?.content ?? '')).toEqual({
      city: 'demo',
      temperatureC: 1,
      sunny: true,
    });
  });
});
