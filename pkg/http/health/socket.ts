import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../log/index.ts';
import { envelope, INTERNAL_MESSAGE } from '../errors/index.ts';
import { acceptedRequestId, REQUEST_ID_HEADER } from '../request-id/index.ts';
import { HEALTH_PATHS, type HealthOptions, probeAnswer } from './index.ts';

/** Answers a request on the socket when it is a probe; false when it is not one (the app serves it). */
export type ProbeResponder = (req: IncomingMessage, res: ServerResponse) => boolean;

const PATHS: ReadonlySet<string> = new Set(HEALTH_PATHS);

/**
 * `GET`/`HEAD` of `/health`, `/healthz` and `/readyz`, answered by the server itself, before the
 * app: the same answers as the app's routes (`probeAnswer`), with the same `x-request-id`. The
 * kubelet asks every few seconds, and going through the app would make an idle broker load the Node
 * adapter and Node's fetch implementation (undici) for answers that need neither (docs/broker.md
 * "Footprint"). Probes skip metrics and spans in the app too.
 */
export function answerProbes(
  opts: Pick<HealthOptions, 'readiness'> & { logger?: Pick<Logger, 'error'> },
): ProbeResponder {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (!PATHS.has(path)) return false;
    const given = req.headers[REQUEST_ID_HEADER];
    const id = acceptedRequestId(typeof given === 'string' ? given : undefined);
    probeAnswer(path as (typeof HEALTH_PATHS)[number], opts, id).then(
      (a) => write(req, res, a.status, { ...a.headers, [REQUEST_ID_HEADER]: id }, JSON.stringify(a.body)),
      (err: unknown) => {
        // As the app's error handler does: the cause in the log, the request id in the answer.
        opts.logger?.error({ err, requestId: id, path }, 'readiness check failed');
        const body = envelope('internal', INTERNAL_MESSAGE, id);
        write(req, res, 500, { [REQUEST_ID_HEADER]: id }, JSON.stringify(body));
      },
    );
    return true;
  };
}

function write(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  json: string,
): void {
  if (res.destroyed) return;
  const body = Buffer.from(json);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(body.length),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
