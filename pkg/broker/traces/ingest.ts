import type { Context } from 'hono';
import { httpError, mediaTypeOf } from '../../http/index.ts';
import type { RouteDeps } from '../core/domain.ts';
import { decodeExport, type ExportInput } from './decode.ts';
import type { OtlpDecoder } from './decoder.ts';
import { encodeTraceResponse } from './otlp-proto.ts';
import type { TraceStore } from './types.ts';

/** What the trace routes get; the OTLP decoder is the broker's (server.ts), absent: decode inline. */
export type TraceDeps = RouteDeps<{ traces: TraceStore }> & { otlpDecoder?: OtlpDecoder | undefined };

const JSON_TYPE = 'application/json';
const PROTO_TYPES = new Set(['application/x-protobuf', 'application/protobuf']);

/**
 * `POST /v1/traces` per OTLP/HTTP: JSON or protobuf, optionally gzip; 415 for another media type,
 * 413 past the body limit (also once decompressed), 400 when undecodable; spans that fail
 * validation are reported in `partialSuccess` while the others are stored. A protobuf request gets
 * a protobuf ExportTraceServiceResponse. Decoding runs on the broker's OTLP decoding thread when it
 * has one (`deps.otlpDecoder`); the route itself only reads bytes and stores what comes back.
 */
export async function ingestTraces(c: Context, deps: TraceDeps): Promise<Response> {
  const type = mediaTypeOf(c);
  const proto = PROTO_TYPES.has(type);
  if (!proto && type !== JSON_TYPE)
    throw httpError(
      'unsupported_media_type',
      `unsupported media type ${JSON.stringify(type || 'none')}; send application/json or application/x-protobuf`,
    );
  const encoding = (c.req.header('content-encoding') ?? 'identity').toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip')
    throw httpError(
      'unsupported_encoding',
      `unsupported content-encoding ${JSON.stringify(encoding)}; use gzip or none`,
    );
  const input: ExportInput = {
    body: new Uint8Array(await c.req.arrayBuffer()),
    proto,
    gzip: encoding === 'gzip',
    maxBytes: deps.config.bodyLimitBytes,
  };
  const decoded = deps.otlpDecoder ? await deps.otlpDecoder.decode(input) : decodeExport(input);
  if (!decoded.ok) {
    // A 503 (the decoding thread stopped) is worth retrying at once.
    const headers = decoded.status === 503 ? { 'retry-after': '1' } : undefined;
    throw httpError(decoded.code, decoded.message, undefined, { headers });
  }
  await deps.stores.traces.ingest(decoded.batch);
  const partial = decoded.rejected
    ? {
        rejectedSpans: decoded.rejected,
        errorMessage: `${decoded.rejected} span(s) rejected: ${decoded.errors.join('; ')}`,
      }
    : undefined;
  if (partial)
    deps.logger.warn(
      { rejected: decoded.rejected, accepted: decoded.batch.ends.length },
      'rejected invalid spans',
    );
  if (proto)
    return c.body(encodeTraceResponse(partial) as Uint8Array<ArrayBuffer>, 200, {
      'content-type': 'application/x-protobuf',
    });
  return c.json(partial ? { partialSuccess: partial } : {}, 200);
}
