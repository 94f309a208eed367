import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkSignals } from './index.ts';

describe('linkSignals', () => {
  it('aborts with the first source to abort, and lets go of the others at once', () => {
    const a = new AbortController();
    const b = new AbortController();
    const { signal } = linkSignals(a.signal, undefined, b.signal);
    expect(signal.aborted).toBe(false);
    b.abort(new Error('b went'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('b went');
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
  });

  it('is aborted from the start when a source already is', () => {
    const done = AbortSignal.abort('early');
    const live = new AbortController();
    const { signal } = linkSignals(live.signal, done);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('early');
    expect(getEventListeners(live.signal, 'abort')).toHaveLength(0);
  });

  it('leaves nothing on a long-lived source once disposed, however many operations linked to it', () => {
    const shutdown = new AbortController();
    for (let i = 0; i < 10_000; i++) {
      const perRequest = new AbortController();
      const linked = linkSignals(perRequest.signal, shutdown.signal);
      linked.dispose();
    }
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    // Still live for those not disposed yet.
    const open = linkSignals(shutdown.signal);
    shutdown.abort('stop');
    expect(open.signal.reason).toBe('stop');
  });
});
