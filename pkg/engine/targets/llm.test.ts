import { describe, expect, it } from 'vitest';
import { modelCallTimeoutMs, SDK_TIMEOUT_AFTER_DEADLINE_MS } from './llm.ts';

describe('modelCallTimeoutMs', () => {
  it("fires after the Query's deadline, so the run's own timer ends the Query as Timeout first", () => {
    const now = 1_000_000;
    expect(modelCallTimeoutMs(now + 2000, now)).toBe(2000 + SDK_TIMEOUT_AFTER_DEADLINE_MS);
    expect(SDK_TIMEOUT_AFTER_DEADLINE_MS).toBeGreaterThan(0);
    // Past the deadline already: still a positive backstop, never before the deadline.
    expect(modelCallTimeoutMs(now - 10, now)).toBeGreaterThan(0);
  });
});
