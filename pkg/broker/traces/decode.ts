import { isUtf8 } from 'node:buffer';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type ErrorCode, HttpError, jsonTooDeep, MAX_JSON_DEPTH, statusOf } from '../../http/index.ts';
import { type Range, type ScannedGroup, scanExportBytes } from './export-scanner.ts';
import {
  addSpan,
  type Flattened,
  flattenRequest,
  flattenSpan,
  groupSuffix,
  prepareSpan,
  sessionMember,
  spanGroup,
} from './otlp.ts';
import { decodeTraceRequest } from './otlp-proto.ts';
import { type SpanGroups, scanExport } from './raw-spans.ts';
import { packSpans, type SpanBatch, SpanBatchBuilder } from './span-batch.ts';

/** One export as received: its bytes and how they are encoded (media type and encoding checked). */
export interface ExportInput {
  body: Uint8Array;
  proto: boolean;
  gzip: boolean;
  /** The body limit, applied again once decompressed. */
  maxBytes: number;
}

/** Why an export was refused: a code of ERROR_CODES with its status (plain data, for the decoding thread). */
export interface ExportRefusal {
  ok: false;
  status: ContentfulStatusCode;
  code: ErrorCode;
  message: string;
}

/** What decoding an export gives: spans ready to store and the rejected ones, or the refusal. */
export type DecodedExport =
  | { ok: true; batch: SpanBatch; rejected: number; errors: string[] }
  | ExportRefusal;

/** The refusal of an export, with the status ERROR_CODES gives its code. */
export const refusal = (code: ErrorCode, message: string): ExportRefusal => ({
  ok: false,
  status: statusOf(code),
  code,
  message,
});

/**
 * Everything between the received bytes and spans ready to store — decompression, parsing,
 * validation, serialization — as one pure step, so it can run on a decoding thread (`decoder.ts`)
 * as well as inline; its result is plain data (structured-clone safe, its buffers transferable).
 */
export function decodeExport(input: ExportInput, opts: { byteScan?: boolean } = {}): DecodedExport {
  let body = input.body;
  if (input.gzip) {
    try {
      // zlib is taken at use: an idle broker does not load it (docs/broker.md "Footprint").
      const { gunzipSync } = process.getBuiltinModule('node:zlib');
      body = gunzipSync(body, { maxOutputLength: input.maxBytes });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
        return refusal('payload_too_large', `decompressed body exceeds ${input.maxBytes} bytes`);
      return refusal('invalid_encoding', `body is not valid gzip: ${(err as Error).message}`);
    }
  }
  if (!input.proto && opts.byteScan !== false) {
    const scanned = isUtf8(body) ? scanExportBytes(body, MAX_JSON_DEPTH) : undefined;
    if (scanned) return fromScan(body, scanned);
  }
  try {
    const { request, texts } = input.proto ? { request: decodeTraceRequest(body) } : decodeJson(body);
    const flat = flattenRequest(request, texts);
    const batch = packSpans(flat.spans.map(prepareSpan));
    return { ok: true, batch, rejected: flat.rejected, errors: flat.errors };
  } catch (err) {
    if (err instanceof HttpError) return refusal(err.code, err.message); // json_too_deep
    const what = input.proto ? 'protobuf' : 'JSON';
    return refusal('invalid_otlp', `undecodable ${what} trace export: ${(err as Error).message}`);
  }
}

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

/**
 * An export the byte scanner took: spans it could take as sent are copied from the body; the
 * others are parsed alone and go through the same validation as a parsed export's.
 */
function fromScan(body: Uint8Array, groups: ScannedGroup[]): DecodedExport {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const text = (r: Range | undefined) => (r ? buf.toString('utf8', r[0], r[1]) : undefined);
  const parse = (r: Range | undefined) => (r ? JSON.parse(buf.toString('utf8', r[0], r[1])) : undefined);
  const out: Flattened = { spans: [], rejected: 0, errors: [] };
  const batch = new SpanBatchBuilder();
  for (const g of groups) {
    const group = spanGroup(parse(g.resource), parse(g.scope));
    const suffix = groupSuffix(group.resource, group.scope);
    // What follows an as-sent span's members, per session (an export is usually one session's).
    const suffixes = new Map<string | undefined, Uint8Array>();
    const suffixOf = (sessionId: string | undefined) => {
      let bytes = suffixes.get(sessionId);
      if (!bytes) {
        bytes = Buffer.from(sessionMember(sessionId) + suffix, 'utf8');
        suffixes.set(sessionId, bytes);
      }
      return bytes;
    };
    for (const [i, s] of g.spans.entries()) {
      if (s.traceId !== undefined) {
        // An empty session id is none, as for a parsed span.
        const sessionId: string | undefined = (parse(s.session) ?? group.session) || undefined;
        const [start, end] = s.range;
        batch.addRaw(s.traceId, sessionId, body, start + 1, end - 1, suffixOf(sessionId));
        continue;
      }
      const spanText = text(s.range) as string;
      const span = flattenSpan(JSON.parse(spanText), spanText, group);
      addSpan(out, i, span);
      if (typeof span !== 'string') batch.add(prepareSpan(span));
    }
  }
  return { ok: true, batch: batch.build(), rejected: out.rejected, errors: out.errors };
}
