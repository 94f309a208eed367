/**
 * Idle 2025-11-25 sessions, kept for the next tool call to the same endpoint: that revision's
 * handshake (`initialize`, `notifications/initialized`) costs two requests before the call and a
 * DELETE after it. A session serves one call at a time (so whatever breaks it belongs to that call),
 * is kept at most `idleMs` without use and only while fewer than `maxIdle` wait per endpoint; one
 * that failed is never kept. 2026-07-28 needs no pool: a call is one request without a session.
 */
import type { McpSession } from './session.ts';

interface Idle {
  session: McpSession;
  timer: NodeJS.Timeout;
}

export class SessionPool {
  readonly #idle = new Map<string, Idle[]>();
  readonly #maxIdle: number;
  readonly #idleMs: number;

  constructor(maxIdle = 8, idleMs = 30_000) {
    this.#maxIdle = maxIdle;
    this.#idleMs = idleMs;
  }

  /** An idle session of `key` still usable, or undefined. */
  take(key: string): McpSession | undefined {
    const list = this.#idle.get(key);
    for (let e = list?.pop(); e; e = list?.pop()) {
      clearTimeout(e.timer);
      if (!e.session.failure.aborted) return e.session;
      void e.session.close();
    }
    return undefined;
  }

  /** Keeps `session` for the next call, or closes it (another revision, failed, or enough kept). */
  give(key: string, session: McpSession): void {
    const list = this.#idle.get(key) ?? [];
    if (session.era.kind !== 'legacy' || session.failure.aborted || list.length >= this.#maxIdle) {
      void session.close();
      return;
    }
    const entry: Idle = {
      session,
      timer: setTimeout(() => {
        const at = list.indexOf(entry);
        if (at >= 0) list.splice(at, 1);
        if (list.length === 0 && this.#idle.get(key) === list) this.#idle.delete(key);
        void session.close();
      }, this.#idleMs).unref(),
    };
    list.push(entry);
    this.#idle.set(key, list);
  }

  /** Closes the idle sessions of `key` (its server forgot them, or was replaced). */
  drop(key: string): void {
    for (const e of this.#idle.get(key) ?? []) {
      clearTimeout(e.timer);
      void e.session.close();
    }
    this.#idle.delete(key);
  }

  async close(): Promise<void> {
    const all = [...this.#idle.values()].flat();
    this.#idle.clear();
    await Promise.all(
      all.map((e) => {
        clearTimeout(e.timer);
        return e.session.close();
      }),
    );
  }
}
