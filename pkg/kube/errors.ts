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

const BY_CODE: Record<number, KubeReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Gone',
  422: 'Invalid',
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

  static fromResponse(code: number, body: unknown, context: string): KubeError {
    let status: KubeStatus | undefined;
    try {
      status = (typeof body === 'string' ? JSON.parse(body) : body) as KubeStatus;
    } catch {
      status = undefined;
    }
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
