import { describe, expect, it } from 'vitest';
import { LastUsedRecorder } from './last-used.ts';

describe('LastUsedRecorder', () => {
  it('writes once per key per interval however often the key is used', async () => {
    const writes: Array<[string, string]> = [];
    let landed: () => void = () => {};
    const batch = new Promise<void>((resolve) => {
      landed = resolve;
    });
    const recorder = new LastUsedRecorder({
      intervalMs: 50,
      write: async (key, at) => {
        writes.push([key, at]);
        if (writes.length === 2) landed();
      },
    });
    for (let i = 0; i < 500; i++)
      recorder.touch(i % 2 ? 'pk-svc-aaaaaaaa' : 'pk-svc-bbbbbbbb', 1_000_000 + i);
    expect(recorder.pendingFor('pk-svc-aaaaaaaa')).toBe(new Date(1_000_499).toISOString());
    await batch;
    await recorder.stop();
    expect(writes.map(([k]) => k).sort()).toEqual(['pk-svc-aaaaaaaa', 'pk-svc-bbbbbbbb']);
    expect(recorder.stats).toMatchObject({ flushes: 1, writes: 2, failures: 0 });
  });

  it('drops a failed write instead of retrying it forever', async () => {
    const recorder = new LastUsedRecorder({ intervalMs: 0, write: () => Promise.reject(new Error('gone')) });
    recorder.touch('pk-svc-aaaaaaaa', Date.now());
    await recorder.flush();
    await recorder.flush();
    expect(recorder.stats).toMatchObject({ flushes: 1, writes: 0, failures: 1 });
  });
});
