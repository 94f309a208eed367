/**
 * The sessions of revision 2025-11-25 (`initialize` → `Mcp-Session-Id`): one SDK 1.x McpServer and
 * streamable HTTP transport per session, kept in memory by this API instance. Bounded: at most
 * `max` sessions, `perCaller` per caller (a caller over it loses its least recently used idle
 * session), and a session unused for `idleMs` is closed. A session belongs to the caller that
 * opened it: another caller naming its id gets the same 404 as for an id that never existed.
 */
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { httpError } from '../../http/index.ts';
import type { Logger } from '../../log/index.ts';
import type { SessionLimits } from './settings.ts';

interface Session {
  id?: string;
  owner: string;
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
  /** Requests whose answer (an SSE stream, for a tool call) is still being sent. */
  inFlight: number;
}

export class LegacySessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly limits: SessionLimits;
  private readonly build: () => McpServer;
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(limits: SessionLimits, build: () => McpServer, logger: Logger, now: () => number = Date.now) {
    this.limits = limits;
    this.build = build;
    this.logger = logger;
    this.now = now;
    const every = Math.max(1000, Math.min(60_000, Math.floor(limits.idleMs / 2)));
    this.sweeper = setInterval(() => this.sweep(), every).unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Serves a request naming a session (`id`), or the `initialize` that opens one (`id` undefined). */
  async handle(req: Request, body: unknown, owner: string, id: string | undefined): Promise<Response> {
    if (id === undefined) return this.open(req, body, owner);
    const session = this.sessions.get(id);
    if (!session || session.owner !== owner) throw sessionNotFound();
    return this.serve(session, req, body);
  }

  /** Whether `id` names a live session of `owner` (another caller's is as unknown as none). */
  owns(id: string, owner: string): boolean {
    return this.sessions.get(id)?.owner === owner;
  }

  /** Closes sessions idle for longer than `idleMs` (none with a request in flight). */
  sweep(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const s of this.sessions.values()) if (s.inFlight === 0 && s.lastUsed < cutoff) this.drop(s, 'idle');
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => this.drop(s, 'shutdown')));
  }

  private async open(req: Request, body: unknown, owner: string): Promise<Response> {
    this.makeRoom(owner);
    const session = { owner, lastUsed: this.now(), inFlight: 0 } as Session;
    session.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        session.id = sid;
        this.sessions.set(sid, session);
      },
      // A DELETE from the client.
      onsessionclosed: () => void this.drop(session, 'deleted'),
    });
    session.server = this.build();
    await session.server.connect(session.transport);
    const res = await this.serve(session, req, body);
    // An initialize the SDK refused opened nothing: let go of what was built for it.
    if (session.id === undefined) await session.server.close().catch(() => {});
    return res;
  }

  /**
   * Room for one more session of `owner`: over its own bound it loses its least recently used
   * idle session; over the instance's, idle sessions are swept first. A caller whose sessions
   * are all busy, or a full instance, gets 429.
   */
  private makeRoom(owner: string): void {
    const mine = [...this.sessions.values()].filter((s) => s.owner === owner);
    if (mine.length >= this.limits.perCaller) {
      const idle = mine.filter((s) => s.inFlight === 0).sort((a, b) => a.lastUsed - b.lastUsed);
      if (!idle[0]) throw limitReached(`all ${mine.length} sessions of this caller have a call in flight`);
      void this.drop(idle[0], 'replaced');
    }
    if (this.sessions.size >= this.limits.max) this.sweep();
    if (this.sessions.size >= this.limits.max)
      throw limitReached(`this API instance holds its maximum of ${this.limits.max} sessions`);
  }

  private async serve(session: Session, req: Request, body: unknown): Promise<Response> {
    session.inFlight++;
    session.lastUsed = this.now();
    const done = () => {
      session.inFlight--;
      session.lastUsed = this.now();
    };
    let res: Response;
    try {
      res = await session.transport.handleRequest(req, { parsedBody: body });
    } catch (err) {
      done();
      throw err;
    }
    if (!res.body) {
      done();
      return res;
    }
    return new Response(whenDone(res.body, done), res);
  }

  private async drop(session: Session, why: string): Promise<void> {
    if (session.id === undefined || this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    this.logger.debug({ session: session.id, why }, 'MCP session closed');
    // Closing aborts the session's calls in flight: their Queries are canceled (targets.ts).
    await session.server.close().catch(() => {});
  }
}

/** One answer for an id that never existed, expired, was closed or is another caller's. */
export const sessionNotFound = () =>
  httpError(
    'mcp_session_not_found',
    'no such Mcp-Session-Id (unknown, expired, closed or not yours): send initialize to start a new session',
  );

const limitReached = (why: string) =>
  httpError('mcp_session_limit', `no new MCP session: ${why}; close one (DELETE) or retry later`, undefined, {
    headers: { 'retry-after': '10' },
  });

/** `body` passed through, `done` called once when it ends, fails or is cancelled by the reader. */
function whenDone(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    done();
  };
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      try {
        const r = await reader.read();
        if (r.done) {
          end();
          ctl.close();
        } else ctl.enqueue(r.value);
      } catch (err) {
        end();
        ctl.error(err);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}
