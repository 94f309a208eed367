import { describe, expect, it } from 'vitest';
import { REDACTED, redactValues } from './redact.ts';

describe('redactValues', () => {
  it('replaces every occurrence of each value, longest first, then token formats', () => {
    const text =
      'key abc-opaque-123 sent as Bearer abc-opaque-123, prefix abc-opaque and eyJhbGciOi.eyJzdWIiOi.sig';
    const out = redactValues(text, ['abc-opaque', 'abc-opaque-123']);
    expect(out).not.toContain('abc-opaque');
    expect(out).toBe(`key ${REDACTED} sent as Bearer ${REDACTED}, prefix ${REDACTED} and ${REDACTED}`);
  });

  it('leaves values too short to be secrets, and text without values, as they were', () => {
    expect(redactValues('a b c', ['a', 'b'])).toBe('a b c');
    expect(redactValues('nothing here', [])).toBe('nothing here');
  });

  it('is bounded on hostile input: a long text and many values', () => {
    const values = Array.from({ length: 200 }, (_, i) => `value-${i}-${'x'.repeat(20)}`);
    const text = values.join(' ').repeat(50);
    const t = performance.now();
    const out = redactValues(text, values);
    expect(performance.now() - t).toBeLessThan(2000);
    for (const v of values.slice(0, 5)) expect(out).not.toContain(v);
  });
});
