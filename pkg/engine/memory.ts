/** The Query's Memory (spec.memory, else Memory "default", else none) and its calls as traced, evented steps. */
import type { Context } from '@opentelemetry/api';
import { DEFAULT_MEMORY_NAME } from '../api/index.ts';
import { isRouteBroker, routeHeadersFor } from './brokers.ts';
import { failedWith } from './failure.ts';
import { resolveHeaders } from './headers.ts';
import { MemoryClient } from './memory-client.ts';
import { errorMessage, type Scope } from './scope.ts';
import { inSpan } from './tracing.ts';

export interface ResolvedMemory {
  name: string;
  client: MemoryClient;
}

/** The query's Memory client; a Memory that cannot be used ends the query as MemoryError. */
export function resolveMemory(scope: Scope): ResolvedMemory | undefined {
  try {
    return memoryOf(scope);
  } catch (err) {
    throw failedWith('MemoryError', err);
  }
}

function memoryOf(scope: Scope): ResolvedMemory | undefined {
  const named = scope.query.spec.memory?.name;
  const name = named ?? DEFAULT_MEMORY_NAME;
  const memory = scope.deps.lookup.memory(scope.namespace, name);
  if (!memory) {
    if (named) throw new Error(`Memory ${named} not found in namespace ${scope.namespace}`);
    return undefined;
  }
  const address = memory.status?.lastResolvedAddress;
  if (!address) {
    const why = memory.status?.message ? `: ${memory.status.message}` : '';
    throw new Error(`Memory ${name} has no resolved address yet (status.lastResolvedAddress is empty${why})`);
  }
  const own = resolveHeaders(memory.spec.headers, scope.namespace, scope.deps.lookup, `Memory ${name}`);
  // The namespace's broker credential goes to that broker only, never to another address a Memory
  // names (another tenant's broker, a third-party backend); the Memory's own headers win.
  const isBroker = isRouteBroker(scope.broker, address);
  const ownAuth = Object.keys(own).some((k) => k.toLowerCase() === 'authorization');
  const headers = { ...(isBroker && !ownAuth ? routeHeadersFor(scope.broker, address) : {}), ...own };
  const { send, limits } = scope.deps.http;
  return {
    name,
    client: new MemoryClient({ name, address, headers, send, maxHistory: limits.historyBytes }),
  };
}

/** Runs one memory call as `<op>Start` / `<op>Complete` (or `<op>Error`) events inside a span. */
export async function memoryStep<T>(
  scope: Scope,
  parent: Context,
  op: 'MemoryCreateConversation' | 'MemoryGetMessages' | 'MemoryAddMessages',
  memory: string,
  data: Record<string, unknown>,
  fn: () => Promise<T>,
  describe: (result: T) => Record<string, unknown> = () => ({}),
): Promise<T> {
  scope.emit(`${op}Start`, `${op} on Memory ${memory}`, { memory, ...data });
  const started = performance.now();
  return inSpan(scope.deps.tracer, parent, `memory.${op}`, { 'berth.memory': memory }, async () => {
    try {
      const result = await fn();
      scope.emit(`${op}Complete`, `${op} on Memory ${memory} done`, {
        memory,
        ...data,
        ...describe(result),
        durationMs: Math.round(performance.now() - started),
      });
      return result;
    } catch (err) {
      if (scope.signal.aborted) throw err;
      scope.emit(`${op}Error`, errorMessage(err), { memory, ...data, error: errorMessage(err) }, true);
      throw failedWith('MemoryError', err);
    }
  });
}
