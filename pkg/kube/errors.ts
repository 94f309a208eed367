/** Kubernetes API failures as typed errors: callers branch on `reason`, never on message text. */
export type KubeReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Forbidden'
  | 'Unauthorized'
  | 'BadRequest'
  | 'Gone'
  | 'TooManyRequests'
  | 'TooLarge'
  | 'Timeout'
  | 'Unavailable'
  | 'Unknown';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** The API server's `Status` object, kept whole so it can be passed through to clients. */
export interface KubeStatus {
  kind?: 'Status';
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; kind?: string; causes?: StatusCause[] };
}

/**
 * etcd's refusal of a write over its request limit (about 1.5 MiB), or, past 2 MiB, the API server's
 * own gRPC client refusing to send it to etcd: the API server passes either on as a 500
 * InternalError, although the size is the writer's doing. A merge PATCH adds to what is stored,
 * so it meets this once the object has grown, not at any fixed body size: it is reported as what it
 * is, 413 `TooLarge`, like the API server's own 413 for a body over its 3 MiB limit.
 */
const ETCD_TOO_LARGE = /etcdserver: request is too large|trying to send message larger than max/;

const BY_CODE: Record<number, KubeReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Gone',
  422: 'Invalid',
  413: 'TooLarge',
  429: 'TooManyRequests',
  503: 'Unavailable',
  504: 'Timeout',
};

export class KubeError extends Error {
  readonly code: number;
  readonly reason: KubeReason;
  readonly status: KubeStatus;

  constructor(code: number, reason: KubeReason, message: string, status?: KubeStatus) {
    super(message);
    this.name = 'KubeError';
    this.code = code;
    this.reason = reason;
    this.status = status ?? { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code };
  }

  get causes(): StatusCause[] {
    return this.status.details?.causes ?? [];
  }

  static fromResponse(answered: number, body: unknown, context: string): KubeError {
    let parsed: KubeStatus | undefined;
    try {
      parsed = (typeof body === 'string' ? JSON.parse(body) : body) as KubeStatus;
    } catch {
      parsed = undefined;
    }
    const tooLarge = answered === 500 && ETCD_TOO_LARGE.test(parsed?.message ?? '');
    const code = tooLarge ? 413 : answered;
    const status = tooLarge ? { ...parsed, reason: 'RequestEntityTooLarge', code } : parsed;
    const reason = (status?.reason === 'AlreadyExists' ? 'AlreadyExists' : BY_CODE[code]) ?? 'Unknown';
    const message = status?.message ?? (typeof body === 'string' ? body.slice(0, 300) : `HTTP ${code}`);
    return new KubeError(
      code,
      reason,
      `${context}: ${message}`,
      status && status.kind === 'Status' ? status : undefined,
    );
  }

  /** Maps anything thrown by @kubernetes/client-node (ApiException with code/body) to a KubeError. */
  static from(err: unknown, context: string): KubeError {
    if (err instanceof KubeError) return err;
    const e = err as { code?: unknown; body?: unknown; message?: string };
    if (typeof e?.code === 'number' && e.code >= 400) return KubeError.fromResponse(e.code, e.body, context);
    return new KubeError(503, 'Unavailable', `${context}: ${e?.message ?? String(err)}`);
  }
}

export const isNotFound = (err: unknown) => err instanceof KubeError && err.reason === 'NotFound';
export const isConflict = (err: unknown) =>
  err instanceof KubeError && (err.reason === 'Conflict' || err.reason === 'AlreadyExists');
