import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { KubeError } from './errors.ts';
import { rawStream } from './raw.ts';

export interface WatchEvent<T = KubernetesObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/**
 * Streams one watch request, calling `onEvent` for each JSON line in order. Resolves when the server
 * ends the watch cleanly (its timeoutSeconds); rejects on HTTP errors (as KubeError), broken
 * connections, abort, or when `onEvent` throws (an ERROR event the caller cannot handle).
 */
export async function watchStream<T>(
  kc: KubeConfig,
  path: string,
  signal: AbortSignal,
  onEvent: (ev: WatchEvent<T>) => void,
  onConnected?: () => void,
): Promise<void> {
  const res = await rawStream(kc, { path, signal });
  if (res.statusCode !== 200) {
    let body = '';
    for await (const c of res) body += String(c);
    throw KubeError.fromResponse(res.statusCode ?? 0, body, `watch ${path.split('?')[0]}`);
  }
  onConnected?.();
  res.setEncoding('utf8');
  let buf = '';
  try {
    for await (const chunk of res as AsyncIterable<string>) {
      buf += chunk;
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) onEvent(JSON.parse(line) as WatchEvent<T>);
        nl = buf.indexOf('\n');
      }
    }
  } finally {
    res.destroy();
  }
  if (buf.trim()) onEvent(JSON.parse(buf) as WatchEvent<T>);
  // An aborted response can end "cleanly" in some Node versions: report it as the abort it is.
  if (signal.aborted) throw signal.reason ?? new Error('watch aborted');
  if (!res.complete) throw new Error(`watch ${path.split('?')[0]}: connection closed mid-stream`);
}
