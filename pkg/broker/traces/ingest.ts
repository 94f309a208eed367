import { gunzipSync } from 'node:zlib';
import type { Context } from 'hono';
import { HttpError, jsonTooDeep, MAX_JSON_DEPTH, mediaTypeOf, sendError } from '../../http/index.ts';
import type { BrokerDeps } from '../deps.ts';
import { flattenRequest } from './otlp.ts';
import { decodeTraceRequest, encodeTraceResponse } from './otlp-proto.ts';
import { type SpanGroups, scanExport } from './raw-spans.ts';

const JSON_TYPE = 'application/json';
const PROTO_TYPES = new Set(['application/x-protobuf', 'application/protobuf']);

/**
 * `POST /v1/traces` per OTLP/HTTP: JSON or protobuf, optionally gzip; 415 for another media type,
 * 413 past the body limit (also once decompressed), 400 when undecodable; spans that fail
 * validation are reported in `partialSuccess` while the others are stored. A protobuf request gets
 * a protobuf ExportTraceServiceResponse.
 */
export async function ingestTraces(c: Context, deps: BrokerDeps): Promise<Response> {
  const type = mediaTypeOf(c);
  const proto = PROTO_TYPES.has(type);
  if (!proto && type !== JSON_TYPE)
    return sendError(
      c,
      415,
      'unsupported_media_type',
      `unsupported media type ${JSON.stringify(type || 'none')}; send application/json or application/x-protobuf`,
    );
  const encoding = (c.req.header('content-encoding') ?? 'identity').toLowerCase();
  // Plain JSON: the text the body limit read (this route is exempt from the depth middleware).
  if (!proto && encoding === 'identity') {
    const text = await c.req.text();
    return store(c, deps, async () => decodeJson(text), false);
  }
  let body: Uint8Array = new Uint8Array(await c.req.arrayBuffer());
  if (encoding === 'gzip') {
    try {
      body = gunzipSync(body, { maxOutputLength: deps.config.bodyLimitBytes });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
        return sendError(
          c,
          413,
          'payload_too_large',
          `decompressed body exceeds ${deps.config.bodyLimitBytes} bytes`,
        );
      return sendError(c, 400, 'invalid_encoding', `body is not valid gzip: ${(err as Error).message}`);
    }
  } else if (encoding !== 'identity')
    return sendError(
      c,
      415,
      'unsupported_encoding',
      `unsupported content-encoding ${JSON.stringify(encoding)}; use gzip or none`,
    );

  const decoded = body;
  return store(
    c,
    deps,
    async () => {
      if (proto) return { request: decodeTraceRequest(decoded) };
      return decodeJson(Buffer.from(decoded).toString('utf8'));
    },
    proto,
  );
}

/** Validates and stores one decoded export; answers in the export's own encoding. */
/**
 * A JSON export, parsed (V8's parser is iterative: any depth is safe to parse) and then scanned
 * once for its spans' text and the depth limit; the scan trusts the text to be JSON.
 */
function decodeJson(text: string): Decoded {
  const request = JSON.parse(text);
  const scan = scanExport(text, MAX_JSON_DEPTH);
  if (scan.tooDeep) throw jsonTooDeep(MAX_JSON_DEPTH);
  return { request, texts: scan.groups };
}

interface Decoded {
  request: unknown;
  texts?: SpanGroups | undefined;
}

async function store(c: Context, deps: BrokerDeps, decode: () => Promise<Decoded>, proto: boolean) {
  let flat: ReturnType<typeof flattenRequest>;
  try {
    const { request, texts } = await decode();
    flat = flattenRequest(request, texts);
  } catch (err) {
    if (err instanceof HttpError) throw err; // json_too_deep, rendered by the app's error handler
    return sendError(
      c,
      400,
      'invalid_otlp',
      `undecodable ${proto ? 'protobuf' : 'JSON'} trace export: ${(err as Error).message}`,
    );
  }
  await deps.stores.traces.ingest(flat.spans);
  const partial = flat.rejected
    ? {
        rejectedSpans: flat.rejected,
        errorMessage: `${flat.rejected} span(s) rejected: ${flat.errors.join('; ')}`,
      }
    : undefined;
  if (partial)
    deps.logger.warn({ rejected: flat.rejected, accepted: flat.spans.length }, 'rejected invalid spans');
  if (proto)
    return c.body(encodeTraceResponse(partial) as Uint8Array<ArrayBuffer>, 200, {
      'content-type': 'application/x-protobuf',
    });
  return c.json(partial ? { partialSuccess: partial } : {}, 200);
}
