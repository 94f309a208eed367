import { memoryUsage } from 'node:process';
import { describe, expect, it, vi } from 'vitest';
import { releaseStartupGarbage } from './index.ts';

describe('releaseStartupGarbage', () => {
  it('collects garbage no allocation pressure would have collected', () => {
    // ~60 MB of short-lived strings, as a module loader's parses leave them.
    let keep = 0;
    for (let i = 0; i < 300; i++) keep += JSON.parse(JSON.stringify({ s: 'x'.repeat(200_000) + i })).s.length;
    expect(keep).toBeGreaterThan(0);
    const before = memoryUsage().heapUsed;
    releaseStartupGarbage();
    const after = memoryUsage().heapUsed;
    expect(after).toBeLessThan(before);
    // A second call reuses the collector it made.
    expect(() => releaseStartupGarbage()).not.toThrow();
  });

  it('leaves the main context without a global gc', () => {
    releaseStartupGarbage();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });

  it('still collects where the resident set size cannot be read (a chroot without /proc)', () => {
    const spy = vi.spyOn(memoryUsage, 'rss').mockImplementation(() => {
      throw new Error('ENOENT: no such file or directory, uv_resident_set_memory');
    });
    try {
      const r = releaseStartupGarbage();
      expect(r.rssBefore).toBeUndefined();
      expect(r.rssAfter).toBeUndefined();
      expect(r.ms).toBeGreaterThanOrEqual(0);
    } finally {
      spy.mockRestore();
    }
  });
});
