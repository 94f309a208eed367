/**
 * The `data:` payloads of a Server-Sent Events body, one per event, as they arrive. Comments
 * (heartbeats) and other fields are skipped; multi-line data is joined with newlines. The body is
 * any async iterable of bytes: a Node stream (the relay reads the broker through undici's request
 * API, without web streams) or a web ReadableStream. Ending early (`return()`, an aborted request)
 * ends the body's iteration, which releases it.
 */
const EVENT_END = /\r?\n\r?\n/;

/** One event: its `data:` payload and its `id:` field when it has one. */
export interface SseEvent {
  id?: string;
  data: string;
}

/** The events of a Server-Sent Events body that carry data, each with its id (see `sseData`). */
export async function* sseEvents(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const part of body) {
    buffer += typeof part === 'string' ? part : decoder.decode(part, { stream: true });
    for (let end = EVENT_END.exec(buffer); end; end = EVENT_END.exec(buffer)) {
      const block = buffer.slice(0, end.index);
      // The separator's own length: "\r\n\n" and "\n\r\n" are three characters, "\r\n\r\n" four.
      buffer = buffer.slice(end.index + end[0].length);
      const data: string[] = [];
      let id: string | undefined;
      for (const l of block.split(/\r?\n/)) {
        if (l.startsWith('data:')) data.push(l.slice(l.startsWith('data: ') ? 6 : 5));
        else if (l.startsWith('id:')) id = l.slice(l.startsWith('id: ') ? 4 : 3);
      }
      if (data.length) yield id === undefined ? { data: data.join('\n') } : { id, data: data.join('\n') };
    }
  }
}

export async function* sseData(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  for await (const e of sseEvents(body)) yield e.data;
}
