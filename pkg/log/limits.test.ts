import { describe, expect, it } from 'vitest';
import { capString, createLogger, LIMITS, REDACTED, redact, redactString, TRUNCATED } from './index.ts';

const nest = (depth: number, leaf: unknown): unknown =>
  depth === 0 ? leaf : { next: nest(depth - 1, leaf) };

function capture() {
  const lines: string[] = [];
  const logger = createLogger({ level: 'trace', destination: { write: (s: string) => void lines.push(s) } });
  return { logger, lines };
}

describe('redaction bounds', () => {
  it('cuts a long string before scanning it and says how many bytes went', () => {
    const text = `${'x '.repeat(40_000)}${'é'.repeat(10_000)}`;
    const out = capString(text);
    const kept = text.slice(0, LIMITS.stringChars);
    expect(out).toBe(`${kept}…[truncated ${Buffer.byteLength(text) - Buffer.byteLength(kept)} bytes]`);
    expect(capString('short')).toBe('short');
    expect(redactString('y'.repeat(1_000_000)).length).toBeLessThan(LIMITS.stringChars + 40);
  });

  it('drops a token cut in half at the limit rather than keeping its recognisable head', () => {
    const key = `sk-proj-${'A'.repeat(40)}`;
    const text = `${' '.repeat(LIMITS.stringChars - 20)}${key} tail`;
    const out = redactString(text);
    expect(out).not.toContain('sk-proj-A');
    expect(out).toMatch(/^ +…\[truncated \d+ bytes\]$/);
  });

  it('replaces objects past the depth limit by [Truncated], never the raw object', () => {
    const deep = nest(LIMITS.depth + 4, { password: 'hunter2-deep', note: `Bearer ${'t'.repeat(20)}` });
    const text = JSON.stringify(redact({ deep }));
    expect(text).not.toContain('hunter2-deep');
    expect(text).not.toContain('tttttttt');
    expect(text).toContain(TRUNCATED);
    // Within the limit, secrets are masked and the rest kept.
    const shallow = JSON.stringify(redact(nest(LIMITS.depth - 1, { password: 'p', note: 'kept' })));
    expect(shallow).toContain(REDACTED);
    expect(shallow).toContain('kept');
  });

  it('keeps the first items of a huge array and the first keys of a huge object', () => {
    const arr = redact(Array.from({ length: 50_000 }, (_, i) => i)) as unknown[];
    expect(arr).toHaveLength(LIMITS.entries + 1);
    expect(arr.at(-1)).toBe(`[${50_000 - LIMITS.entries} more items]`);
    const obj = redact(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]))) as object;
    expect(Object.keys(obj)).toHaveLength(LIMITS.entries + 1);
    expect((obj as Record<string, unknown>)['…']).toBe('[4000 more keys]');
  });

  it('bounds a whole record: text and values past the budget are [Truncated]', () => {
    const many = Array.from({ length: 100 }, () => `secret-ish ${'z'.repeat(60_000)}`);
    const out = redact({ many }) as { many: string[] };
    const chars = out.many.reduce((n, s) => n + s.length, 0);
    expect(chars).toBeLessThan(LIMITS.recordChars + 100 * 40);
    expect(out.many.at(-1)).toBe(TRUNCATED);
    const wide = Array.from({ length: 1000 }, () => Array.from({ length: 1000 }, () => 1));
    expect(JSON.stringify(redact(wide))).toContain(TRUNCATED);
  });

  it('describes binary data instead of walking it', () => {
    expect(redact({ b: Buffer.alloc(1_000_000) })).toEqual({ b: '[Buffer of 1000000 bytes]' });
  });

  it('logs hostile records quickly and without what they hide', () => {
    const { logger, lines } = capture();
    const secret = `sk-svc-${'S'.repeat(30)}`;
    const start = performance.now();
    logger.error(
      { path: `/${'a-'.repeat(7_000)}`, body: `${'eyJ'}${'a.'.repeat(500_000)}`, deep: nest(30, { secret }) },
      `model error ${'x://user:'.repeat(100_000)} ${secret}`,
    );
    logger.child({ err: new Error(`boom ${secret}`) }).warn(new Error(`again ${secret}`));
    logger.info('interpolated %s and %j', secret, { note: secret });
    expect(performance.now() - start).toBeLessThan(2000); // the old patterns took minutes
    const all = lines.join('');
    expect(all).not.toContain(secret);
    expect(all).toContain('…[truncated ');
    expect(all).toContain(TRUNCATED);
    for (const line of lines) expect(line.length).toBeLessThan(LIMITS.recordChars + 64 * 1024);
  });
});
