import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { live, permissions } from './api.js';

/** Runs `load` (async) when `deps` change: {data, error, loading, reload}. Stale answers are dropped. */
export function useAsync(load, deps) {
  const [state, setState] = useState({ loading: true });
  const run = useRef(0);
  const reload = useCallback(
    async (quiet = false) => {
      const n = ++run.current;
      if (!quiet) setState((s) => ({ ...s, loading: true }));
      try {
        const data = await load();
        if (n === run.current) setState({ data, loading: false });
      } catch (error) {
        if (n === run.current) setState({ error, loading: false });
      }
    },
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps decide
    deps,
  );
  useEffect(() => {
    void reload();
  }, [reload]);
  return { ...state, reload };
}

/** Marks the page ready (body[data-ready=true]) once its first data is in: tests and screenshots wait on it. */
export function useReady(ready) {
  useEffect(() => {
    if (!ready) return;
    document.body.dataset.ready = 'true';
    // When, from the navigation's start: what the page-load benchmark reads.
    if (!performance.getEntriesByName('berth-ready').length) performance.mark('berth-ready');
  }, [ready]);
}

/** A live SSE subscription while mounted; `status` is '', 'live' or 'reconnecting'. */
export function useLive(path, onItem) {
  const [status, setStatus] = useState('');
  const handler = useRef(onItem);
  handler.current = onItem;
  useEffect(() => {
    if (!path) return undefined;
    return live(path, (item) => handler.current(item), setStatus);
  }, [path]);
  return status;
}

/** The permissions probe's answer (undefined until it comes). */
export function usePermissions() {
  const [perms, setPerms] = useState();
  useEffect(() => {
    void permissions().then(setPerms);
  }, []);
  return perms;
}

/** Calls `fn` at most once per `ms` (trailing): live events refresh a page without a storm. */
export function useThrottled(fn, ms) {
  const timer = useRef();
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      latest.current();
    }, ms);
  }, [ms]);
}
