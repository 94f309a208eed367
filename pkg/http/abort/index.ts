/** A signal following several others, and how to let go of them. */
export interface LinkedSignal {
  signal: AbortSignal;
  /** Unhooks the signal from its sources; call it once the operation it guarded is over. */
  dispose(): void;
}

/**
 * An AbortSignal that aborts (with the same reason) when any of `sources` does — what
 * AbortSignal.any() does, except that it lets go of its sources on `dispose()`. Node keeps every
 * observed AbortSignal.any() result in a long-lived source's set of dependants for as long as that
 * source lives, GC or not (nodejs/node#64476, still in v24): combining a per-request signal with a
 * process-wide one (the shutdown deadline, a controller's stop signal) leaked each request's
 * signal and all it referenced — the body stream, its decoder, the fetch.
 */
export function linkSignals(...sources: Array<AbortSignal | undefined>): LinkedSignal {
  const ctl = new AbortController();
  const hooks: Array<[AbortSignal, () => void]> = [];
  const dispose = () => {
    for (const [s, hook] of hooks.splice(0)) s.removeEventListener('abort', hook);
  };
  for (const s of sources) {
    if (!s) continue;
    if (s.aborted) {
      dispose();
      ctl.abort(s.reason);
      break;
    }
    const hook = () => {
      dispose();
      ctl.abort(s.reason);
    };
    s.addEventListener('abort', hook, { once: true });
    hooks.push([s, hook]);
  }
  return { signal: ctl.signal, dispose };
}
