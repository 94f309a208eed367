import { afterEach, describe, expect, it } from 'vitest';
import type { PendingApproval } from '../../api/index.ts';
import { storable } from './checkpoint.ts';
import type { Checkpoint } from './types.ts';

const pending: PendingApproval[] = [
  {
    id: 'a1',
    type: 'tool',
    tool: 't',
    arguments: { token: 'sk-live-123' },
    requestedAt: 'x',
    deadline: 'y',
    timeout: '10m',
    onTimeout: 'reject',
  },
];
function checkpoint(content: string): Checkpoint {
  return {
    v: 1,
    runMs: 5,
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    frames: [
      {
        kind: 'agent',
        name: 'a',
        turn: 1,
        repaired: false,
        calls: [],
        messages: [{ role: 'user', content }],
      },
    ],
  };
}

afterEach(() => {
  delete process.env.ENGINE_MAX_CHECKPOINT_BYTES;
});

describe('the checkpoint as stored', () => {
  it('replaces Secret values and nothing else of the conversation', () => {
    const long = `${'x'.repeat(20_000)} the key is sk-live-123 ok`;
    const out = storable(checkpoint(long), pending, new Set(['sk-live-123', 'ab']));
    const msg = (out.checkpoint.frames as Checkpoint['frames'])[0];
    expect(msg?.kind === 'agent' && msg.messages[0]?.content).toBe(
      `${'x'.repeat(20_000)} the key is [REDACTED] ok`,
    );
    expect(out.pending[0]?.arguments).toEqual({ token: '[REDACTED]' });
  });

  it('refuses a conversation over ENGINE_MAX_CHECKPOINT_BYTES, naming the size and the limit', () => {
    process.env.ENGINE_MAX_CHECKPOINT_BYTES = '4096';
    expect(() => storable(checkpoint('y'.repeat(5000)), pending, new Set())).toThrow(
      /cannot wait for approval: the conversation to keep is .* over ENGINE_MAX_CHECKPOINT_BYTES/,
    );
    expect(storable(checkpoint('short'), pending, new Set()).pending).toHaveLength(1);
  });
});
