/** The Query's chunk stream from the broker, and the chunks it carries. */
import { type Dispatcher, request } from 'undici';
import { brokerAuthHeaders } from '../../http/service-token/index.ts';
import { CompatError } from './errors.ts';
import { sseData } from './sse-reader.ts';

/** A chunk as the engine writes it to the broker (an OpenAI chunk, or an error with its reason). */
export interface UpstreamChunk {
  id?: string;
  error?: { message?: string; type?: string; code?: string; reason?: string };
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  /** Berth's extension: the query waits for input, or resumed (docs/approvals.md). */
  berth?: Record<string, unknown>;
}

/** A `data:` payload as a chunk; `[DONE]` or anything that is not JSON is an empty one. */
export function chunkOfData(data: string): UpstreamChunk {
  try {
    return (JSON.parse(data) as UpstreamChunk | null) ?? {};
  } catch {
    return {};
  }
}

/**
 * `GET /stream/{query}` of the broker through undici's request API: its body is a Node stream, not
 * a web stream (a fetch per streamed completion was a large part of the relay's cost). Aborting
 * `signal` ends the request and the body's iteration. Yields the `data:` payloads.
 */
export async function openBrokerStream(
  brokerUrl: string,
  id: string,
  signal: AbortSignal,
): Promise<AsyncGenerator<string>> {
  const url = new URL(`${brokerUrl.replace(/\/$/, '')}/stream/${encodeURIComponent(id)}`);
  url.search = 'from-beginning=true&wait-for-query=60';
  let res: Dispatcher.ResponseData;
  try {
    const headers = { accept: 'text/event-stream', ...brokerAuthHeaders(brokerUrl, url) };
    res = await request(url, { headers, signal });
  } catch (err) {
    throw new CompatError('broker_unavailable', `the broker is not reachable: ${(err as Error).message}`);
  }
  if (res.statusCode === 200) return sseData(res.body);
  await res.body.dump();
  throw new CompatError('broker_error', `the broker answered HTTP ${res.statusCode} for the query's stream`);
}
