/**
 * What went wrong talking to an MCP server, as one error with a reason (the MCPServer's condition
 * reason, docs/mcp.md "Errors") and a message that says which server, which request and why. The
 * SDKs' own errors (two packages, several classes each) are read here and nowhere else.
 */
import {
  type UpstreamError as BaseUpstreamError,
  boundedText,
  UpstreamError,
  upstreamErrorIn,
} from '../upstream.ts';

export type McpFailureReason =
  | 'Unreachable'
  | 'Timeout'
  | 'HttpError'
  | 'Unauthorized'
  | 'ServerError'
  | 'InvalidAnswer'
  | 'AnswerTooLarge'
  | 'RedirectRefused'
  | 'TooManyPages'
  | 'TooManyTools'
  | 'InputRequested'
  | 'Disconnected'
  | 'UnsupportedRevision'
  | 'ToolError';

export class McpFailure extends UpstreamError {
  override name = 'McpFailure';
  readonly reason: McpFailureReason;
  /** Worth another attempt (the server may answer next time). */
  readonly transient: boolean;
  /** The server cannot have acted on the request (nothing reached it, or it declined): safe to send again. */
  readonly unsent: boolean;

  constructor(
    reason: McpFailureReason,
    message: string,
    opts: { transient?: boolean; unsent?: boolean; cause?: unknown } = {},
  ) {
    super(boundedText(message), { cause: opts.cause });
    this.reason = reason;
    this.transient = opts.transient ?? false;
    this.unsent = opts.unsent ?? false;
  }
}

/** Network error codes of a request that never reached the server. */
const UNSENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Codes of a connection that broke under a request the server may have acted on. */
const BROKEN_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ETIMEDOUT']);

function codeIn(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (UNSENT_CODES.has(code) || BROKEN_CODES.has(code))) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The HTTP status an SDK error carries: v2's SdkHttpError `data.status`, 1.x's StreamableHTTPError `code`. */
function httpStatusIn(err: unknown): number | undefined {
  for (let e = err, depth = 0; e && depth < 6; depth++) {
    const data = (e as { data?: { status?: unknown } }).data;
    if (typeof data?.status === 'number') return data.status;
    if (
      (e as Error).name === 'StreamableHTTPError' ||
      /^Streamable HTTP error/.test((e as Error).message ?? '')
    ) {
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'number' && code >= 100) return code;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A JSON-RPC error the server answered (1.x McpError, v2 ProtocolError): its numeric code. */
function rpcCodeIn(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  const name = (err as Error).name;
  if (
    typeof code === 'number' &&
    code < 0 &&
    (name === 'McpError' || name === 'ProtocolError' || /^MCP error/.test((err as Error).message ?? ''))
  )
    return code;
  return undefined;
}

/** An error's message on one line (SDK validation errors quote JSON over many). */
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ');

/** Looks like a message that failed to parse (invalid JSON, or JSON that is not JSON-RPC). */
function isGarbage(err: unknown): boolean {
  const name = (err as Error).name;
  const msg = messageOf(err);
  return (
    name === 'SyntaxError' ||
    name === 'ZodError' ||
    name === '$ZodError' ||
    /Unexpected content type|unusable reply|is not valid JSON|Unexpected token|Invalid input|INVALID_RESULT|invalid_type/i.test(
      msg,
    ) ||
    (err as { code?: unknown }).code === 'INVALID_RESULT'
  );
}

/**
 * `err` (thrown by an SDK, the engine's fetch, or ours) as an McpFailure; `what` names the server
 * and the request, e.g. `MCPServer ns/tools: tools/call echo`. Cancellation is not handled here.
 */
export function mcpFailure(what: string, err: unknown): McpFailure {
  if (err instanceof McpFailure) return err;
  const own: BaseUpstreamError | undefined = upstreamErrorIn(err);
  if (own?.name === 'AnswerTooLarge')
    return new McpFailure('AnswerTooLarge', `${what}: ${own.message}`, { cause: err });
  if (own?.name === 'RedirectRefused')
    return new McpFailure('RedirectRefused', `${what}: ${own.message}`, { cause: err });
  // The 1.x transport reports a broken SSE answer as a new Error quoting the cause's text only.
  const quoted = /(AnswerTooLarge|RedirectRefused): (.*)$/.exec(messageOf(err));
  if (quoted) return new McpFailure(quoted[1] as McpFailureReason, `${what}: ${quoted[2]}`, { cause: err });
  const code = codeIn(err);
  if (code && UNSENT_CODES.has(code))
    return new McpFailure('Unreachable', `${what}: cannot connect (${code})`, {
      transient: true,
      unsent: true,
      cause: err,
    });
  const status = httpStatusIn(err);
  if (status !== undefined) return httpFailure(what, status, err);
  if (code)
    return new McpFailure('Disconnected', `${what}: the connection broke (${code})`, {
      transient: true,
      cause: err,
    });
  const rpc = rpcCodeIn(err);
  if (rpc !== undefined)
    return new McpFailure('ServerError', `${what}: the server answered error ${rpc}: ${messageOf(err)}`, {
      cause: err,
    });
  if (isGarbage(err))
    return new McpFailure(
      'InvalidAnswer',
      `${what}: the answer is not a valid MCP message: ${messageOf(err)}`,
      { cause: err },
    );
  if (
    /SSE stream disconnected|Connection closed|CONNECTION_CLOSED|stream ended|terminated|other side closed/i.test(
      messageOf(err),
    )
  )
    return new McpFailure(
      'Disconnected',
      `${what}: the server closed the connection before answering (${messageOf(err)})`,
      {
        cause: err,
      },
    );
  return new McpFailure('InvalidAnswer', `${what}: ${messageOf(err)}`, { cause: err });
}

function httpFailure(what: string, status: number, err: unknown): McpFailure {
  const detail = boundedText(messageOf(err).replace(/^Streamable HTTP error: /, ''), 300);
  if (status === 401 || status === 403)
    return new McpFailure(
      'Unauthorized',
      `${what}: HTTP ${status}: the server refused the credentials (spec.headers)`,
      { cause: err },
    );
  // 429 and 503: the server declined the request before acting on it. 502/504: a proxy between
  // may have passed it on. 404 on a session: the server forgot it (restarted) — nothing was run.
  if (status === 429 || status === 503)
    return new McpFailure('HttpError', `${what}: HTTP ${status}: ${detail}`, {
      transient: true,
      unsent: true,
      cause: err,
    });
  if (status === 502 || status === 504)
    return new McpFailure('HttpError', `${what}: HTTP ${status}: ${detail}`, { transient: true, cause: err });
  if (status >= 500)
    return new McpFailure('ServerError', `${what}: HTTP ${status}: ${detail}`, { cause: err });
  return new McpFailure('HttpError', `${what}: HTTP ${status}: ${detail}`, { cause: err });
}
