import { describe, expect, it } from 'vitest';
import { requiredByDefault, resolvePolicy } from './policy.ts';

describe('approval policy', () => {
  it('requires approval by default only for tools their MCP server marks destructive', () => {
    expect(requiredByDefault({ destructiveHint: true })).toBe(true);
    expect(requiredByDefault({ destructiveHint: true, readOnlyHint: true })).toBe(false);
    expect(requiredByDefault({ destructiveHint: false })).toBe(false);
    expect(requiredByDefault({})).toBe(false);
    expect(requiredByDefault(undefined)).toBe(false);
  });

  it('takes each field from the agent entry, else the Tool, else the defaults', () => {
    expect(resolvePolicy(undefined, undefined, undefined, 'Agent a')).toEqual({
      required: false,
      timeout: '10m',
      timeoutMs: 600_000,
      onTimeout: 'reject',
    });
    expect(
      resolvePolicy(
        { timeout: '30s' },
        { required: true, timeout: '1h', onTimeout: 'proceed' },
        undefined,
        'Agent a',
      ),
    ).toEqual({ required: true, timeout: '30s', timeoutMs: 30_000, onTimeout: 'proceed' });
    expect(resolvePolicy({ required: false }, undefined, { destructiveHint: true }, 'Agent a').required).toBe(
      false,
    );
    expect(
      resolvePolicy(undefined, { approvers: ['group:ops'] }, { destructiveHint: true }, 'Agent a'),
    ).toMatchObject({ required: true, approvers: ['group:ops'] });
    expect(() => resolvePolicy({ timeout: 'soon' }, undefined, undefined, 'Agent a')).toThrow(
      /Agent a: approval.timeout/,
    );
  });
});
