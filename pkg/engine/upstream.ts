/**
 * What the engine accepts from an upstream (Model, Tool, Memory, Evaluator): byte caps on answers,
 * a small cap on error answers (read, then the rest discarded unread), and the errors that say a
 * cap or a redirect rule was hit. Every upstream is hostile: an endless or huge answer must end the
 * call, not the process (docs/security.md, "Upstreams").
 */

/** What is called; picks the byte cap of its answers and its redirect rule. */
export type UpstreamKind = 'model' | 'tool' | 'memory' | 'evaluator' | 'mcp' | 'other';

export interface UpstreamLimits {
  /** One model answer, whole or streamed (SSE framing included). */
  modelBytes: number;
  /** One Tool answer. */
  toolBytes: number;
  /** One Memory answer (a page of history, a new conversation, an append's reply). */
  memoryBytes: number;
  /** A whole conversation's history read from a Memory, page after page. */
  historyBytes: number;
  /** One Evaluator answer. */
  evaluatorBytes: number;
  /** One MCP server answer (a tools/list page, a tool call's result; an SSE answer as a whole). */
  mcpBytes: number;
  /** Anything else (the broker's replies). */
  otherBytes: number;
  /** What is kept of an error answer (status ≥ 300) of any upstream; the rest is never read. */
  errorBytes: number;
}

const KiB = 1024;
const MiB = 1024 * KiB;

export const DEFAULT_LIMITS: UpstreamLimits = {
  modelBytes: 16 * MiB,
  toolBytes: 1 * MiB,
  memoryBytes: 8 * MiB,
  historyBytes: 16 * MiB,
  evaluatorBytes: 1 * MiB,
  mcpBytes: 1 * MiB,
  otherBytes: 1 * MiB,
  errorBytes: 16 * KiB,
};

/** The environment variable of each limit (bytes); unset or invalid keeps the default. */
export const LIMIT_ENV: Record<keyof UpstreamLimits, string> = {
  modelBytes: 'ENGINE_MAX_MODEL_ANSWER_BYTES',
  toolBytes: 'ENGINE_MAX_TOOL_ANSWER_BYTES',
  memoryBytes: 'ENGINE_MAX_MEMORY_ANSWER_BYTES',
  historyBytes: 'ENGINE_MAX_HISTORY_BYTES',
  evaluatorBytes: 'ENGINE_MAX_EVALUATOR_ANSWER_BYTES',
  mcpBytes: 'ENGINE_MAX_MCP_ANSWER_BYTES',
  otherBytes: 'ENGINE_MAX_OTHER_ANSWER_BYTES',
  errorBytes: 'ENGINE_MAX_ERROR_BODY_BYTES',
};

/**
 * The limits: `given` first, then the environment, then the defaults. A value that is not a whole
 * number of at least 1 KiB is refused with the variable named (a typo must not lift a cap).
 */
export function upstreamLimits(
  given: Partial<UpstreamLimits> = {},
  env: NodeJS.ProcessEnv = process.env,
): UpstreamLimits {
  const out = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as Array<keyof UpstreamLimits>) {
    const raw = env[LIMIT_ENV[key]];
    const value = given[key] ?? (raw === undefined || raw === '' ? undefined : Number(raw));
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < KiB)
      throw new Error(
        `${LIMIT_ENV[key]} must be a whole number of bytes ≥ 1024 (got ${JSON.stringify(raw ?? value)})`,
      );
    out[key] = value;
  }
  return out;
}

export function answerLimit(limits: UpstreamLimits, kind: UpstreamKind): number {
  return limits[`${kind}Bytes`];
}

/** `16 MiB`, `1 KiB`, `300 bytes`. */
export function formatBytes(n: number): string {
  if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB`;
  if (n >= KiB && n % KiB === 0) return `${n / KiB} KiB`;
  return `${n} bytes`;
}

/** A failure decided by the engine about what an upstream did (not a network fault): its message is whole. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
}

/** An answer larger than its cap: the call is ended, what arrived is dropped. */
export class AnswerTooLarge extends UpstreamError {
  override name = 'AnswerTooLarge';
  constructor(kind: UpstreamKind, limit: number) {
    super(
      `the ${kind === 'other' ? '' : `${kind === 'mcp' ? 'MCP server' : kind} `}answer is larger than ${formatBytes(limit)} (${LIMIT_ENV[`${kind}Bytes`]}); it was not read further`,
    );
  }
}

/** A redirect the engine does not follow (docs/security.md, "Redirects"). */
export class RedirectRefused extends UpstreamError {
  override name = 'RedirectRefused';
}

/** The engine's own verdict in a cause chain (SDKs wrap fetch failures in errors of their own). */
export function upstreamErrorIn(err: unknown): UpstreamError | undefined {
  for (let e = err, depth = 0; e && depth < 6; depth++) {
    if (e instanceof UpstreamError) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Status messages, events and logs carry at most this many characters of an error. */
export const MAX_MESSAGE_CHARS = 1024;

/** `text` cut to `max` characters, an ellipsis marking the cut (never inside a surrogate pair). */
export function boundedText(text: string, max = MAX_MESSAGE_CHARS): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}
