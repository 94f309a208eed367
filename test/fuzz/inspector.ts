import { writeFileSync } from 'node:fs';

/**
 * A minimal Chrome DevTools Protocol client for a child process started with `--inspect=127.0.0.1:0`:
 * enough to collect its garbage and read its live heap from outside, so a fuzz run can measure the
 * service alone (the generator's own allocations stay in the generator's process).
 */
export interface Inspector {
  send<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  /** Evaluates an expression in the child's main context and returns its JSON value. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Bytes of live heap after full collections. */
  liveHeap(): Promise<number>;
  /** Writes a heap snapshot (for DevTools' Memory tab, or a script comparing retainers). */
  snapshot(file: string): Promise<void>;
  close(): void;
}

/** The `ws://…` address a child prints as `Debugger listening on ws://…`. */
export const INSPECTOR_LINE = /Debugger listening on (ws:\/\/\S+)/;

export async function connectInspector(url: string): Promise<Inspector> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error(`inspector ${url}: connection failed`)), {
      once: true,
    });
  });
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let chunks: string[] | undefined;
  ws.addEventListener('message', (ev) => {
    const msg = JSON.parse(String(ev.data)) as {
      id?: number;
      method?: string;
      params?: { chunk?: string };
      result?: unknown;
      error?: { message: string };
    };
    if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') chunks?.push(msg.params?.chunk ?? '');
    const p = msg.id === undefined ? undefined : pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id as number);
    if (msg.error) p.reject(new Error(msg.error.message));
    else p.resolve(msg.result);
  });
  const send = <T>(method: string, params: Record<string, unknown> = {}) =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = await send<{ result: { value?: T }; exceptionDetails?: { text: string } }>('Runtime.evaluate', {
      expression,
      returnByValue: true,
      awaitPromise: true,
    });
    if (r.exceptionDetails) throw new Error(`evaluate ${expression}: ${JSON.stringify(r.exceptionDetails)}`);
    return r.result.value as T;
  };
  return {
    send,
    evaluate,
    async liveHeap() {
      // Between collections the child's event loop turns, so FinalizationRegistry callbacks run.
      for (let i = 0; i < 3; i++) {
        await send('HeapProfiler.collectGarbage');
        await new Promise((r) => setTimeout(r, 50));
      }
      await send('HeapProfiler.collectGarbage');
      return (await send<{ usedSize: number }>('Runtime.getHeapUsage')).usedSize;
    },
    async snapshot(file) {
      chunks = [];
      await send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      writeFileSync(file, chunks.join(''));
      chunks = undefined;
    },
    close: () => ws.close(),
  };
}
