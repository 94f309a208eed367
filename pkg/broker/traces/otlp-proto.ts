import { createRequire } from 'node:module';
import type protobufType from 'protobufjs';

/**
 * The OTLP trace protobuf schema (opentelemetry-proto, trace/v1 + collector/trace/v1), reduced to
 * the fields the broker reads. Written here rather than fetched: field numbers are from the
 * published .proto files. Enums are read as plain integers.
 */
const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; fixed32 flags = 16;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  repeated Event events = 11; uint32 dropped_events_count = 12; repeated Link links = 13; uint32 dropped_links_count = 14;
  Status status = 15;
  message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
  message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
}
message Status { string message = 2; int32 code = 3; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
`;

interface Schema {
  Request: protobufType.Type;
  Response: protobufType.Type;
}

let schema: Schema | undefined;

/**
 * protobufjs and the parsed schema, loaded by the first protobuf export (or answer) rather than at
 * start: most brokers only ever see OTLP/JSON, and an idle tenant broker should not hold them
 * (docs/broker.md "Footprint"). `require` keeps the decoders synchronous (protobufjs is CommonJS).
 */
function otlp(): Schema {
  if (!schema) {
    const protobuf = createRequire(import.meta.url)('protobufjs') as typeof protobufType;
    const root = protobuf.parse(OTLP_PROTO).root;
    schema = {
      Request: root.lookupType('otlp.ExportTraceServiceRequest'),
      Response: root.lookupType('otlp.ExportTraceServiceResponse'),
    };
  }
  return schema;
}

const BYTE_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** Hex for id fields (OTLP/JSON's encoding), base64 for other bytes values. */
function bytesToJson(value: unknown, key: string): unknown {
  if (value instanceof Uint8Array)
    return BYTE_FIELDS.has(key) ? Buffer.from(value).toString('hex') : Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map((v) => bytesToJson(v, key));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = bytesToJson(v, k);
    return out;
  }
  return value;
}

/** Decodes a protobuf ExportTraceServiceRequest into the OTLP/JSON object shape (camelCase, hex ids). */
export function decodeTraceRequest(body: Uint8Array): Record<string, unknown> {
  const { Request } = otlp();
  const msg = Request.decode(body);
  const obj = Request.toObject(msg, {
    longs: String,
    enums: Number,
    bytes: undefined,
    defaults: false,
    oneofs: false,
  });
  return bytesToJson(obj, '') as Record<string, unknown>;
}

export function encodeTraceResponse(partial?: { rejectedSpans: number; errorMessage: string }): Uint8Array {
  const { Response } = otlp();
  const payload = partial ? { partialSuccess: partial } : {};
  return Response.encode(Response.fromObject(payload)).finish();
}

/** For tests: encodes an OTLP/JSON-shaped request (ids as hex) as protobuf. */
export function encodeTraceRequest(obj: Record<string, unknown>): Uint8Array {
  const hexToBytes = (v: unknown, key: string): unknown => {
    if (typeof v === 'string' && BYTE_FIELDS.has(key)) return Buffer.from(v, 'hex');
    if (Array.isArray(v)) return v.map((x) => hexToBytes(x, key));
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hexToBytes(x, k)]));
    return v;
  };
  const { Request } = otlp();
  return Request.encode(Request.fromObject(hexToBytes(obj, '') as Record<string, unknown>)).finish();
}

export function decodeTraceResponse(body: Uint8Array): Record<string, unknown> {
  const { Response } = otlp();
  return Response.toObject(Response.decode(body), { longs: Number }) as Record<string, unknown>;
}
