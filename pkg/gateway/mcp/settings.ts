/**
 * The `/mcp` settings `berth api` reads from its environment, validated with the rest of its
 * configuration (config.ts). Only zod here: the CLI imports config.ts for every command.
 */
import { z } from 'zod';

export interface SessionLimits {
  /** Sessions (revision 2025-11-25) this API instance holds at most. */
  max: number;
  /** Sessions one caller holds at most; a new one replaces its least recently used idle one. */
  perCaller: number;
  /** A session unused this long is closed. */
  idleMs: number;
}

export const MCP_ENV = {
  MCP_MAX_SESSIONS: z.coerce.number().int().positive().default(1000),
  MCP_MAX_SESSIONS_PER_CALLER: z.coerce.number().int().positive().default(32),
  MCP_SESSION_IDLE_SECONDS: z.coerce.number().positive().default(900),
};

export function sessionLimits(env: NodeJS.ProcessEnv = process.env): SessionLimits {
  const s = z.object(MCP_ENV).parse(env);
  return {
    max: s.MCP_MAX_SESSIONS,
    perCaller: s.MCP_MAX_SESSIONS_PER_CALLER,
    idleMs: s.MCP_SESSION_IDLE_SECONDS * 1000,
  };
}
