import { gunzipSync } from 'node:zlib';
import { HttpError, jsonTooDeep, MAX_JSON_DEPTH } from '../../http/index.ts';
import { flattenRequest, type PreparedSpan, prepareSpan } from './otlp.ts';
import { decodeTraceRequest } from './otlp-proto.ts';
import { type SpanGroups, scanExport } from './raw-spans.ts';

/** One export as received: its bytes and how they are encoded (media type and encoding checked). */
export interface ExportInput {
  body: Uint8Array;
  proto: boolean;
  gzip: boolean;
  /** The body limit, applied again once decompressed. */
  maxBytes: number;
}

/** What decoding an export gives: spans ready to store and the rejected ones, or the refusal. */
export type DecodedExport =
  | { ok: true; spans: PreparedSpan[]; rejected: number; errors: string[] }
  | { ok: false; status: 400 | 413 | 503; code: string; message: string };

/**
 * Everything between the received bytes and spans ready to store — decompression, parsing,
 * validation, serialization — as one pure step, so it can run on a decoding thread (`decoder.ts`)
 * as well as inline; its result is plain data (structured-clone safe).
 */
export function decodeExport(input: ExportInput): DecodedExport {
  let body = input.body;
  if (input.gzip) {
    try {
      body = gunzipSync(body, { maxOutputLength: input.maxBytes });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
        return refuse(413, 'payload_too_large', `decompressed body exceeds ${input.maxBytes} bytes`);
      return refuse(400, 'invalid_encoding', `body is not valid gzip: ${(err as Error).message}`);
    }
  }
  try {
    const { request, texts } = input.proto ? { request: decodeTraceRequest(body) } : decodeJson(body);
    const flat = flattenRequest(request, texts);
    return { ok: true, spans: flat.spans.map(prepareSpan), rejected: flat.rejected, errors: flat.errors };
  } catch (err) {
    if (err instanceof HttpError) return refuse(400, err.code, err.message);
    const what = input.proto ? 'protobuf' : 'JSON';
    return refuse(400, 'invalid_otlp', `undecodable ${what} trace export: ${(err as Error).message}`);
  }
}

const refuse = (status: 400 | 413 | 503, code: string, message: string): DecodedExport => ({
  ok: false,
  status,
  code,
  message,
});

/**
 * A JSON export, parsed (V8's parser is iterative: any depth is safe to parse) and then scanned
 * once for its spans' text and the depth limit; the scan trusts the text to be JSON.
 */
function decodeJson(body: Uint8Array): { request: unknown; texts: SpanGroups | undefined } {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const request = JSON.parse(text);
  const scan = scanExport(text, MAX_JSON_DEPTH);
  if (scan.tooDeep) throw jsonTooDeep(MAX_JSON_DEPTH);
  return { request, texts: scan.groups };
}
