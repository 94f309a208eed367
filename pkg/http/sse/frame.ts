/** SSE wire framing. Frames are built once as bytes and shared by every subscriber. */
export const SSE_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  // Reverse proxies (nginx) must not buffer a live stream.
  'x-accel-buffering': 'no',
};

export const CONNECTED_FRAME = Buffer.from(': connected\n\n');
export const HEARTBEAT_FRAME = Buffer.from(': heartbeat\n\n');
export const DONE_FRAME = Buffer.from('data: [DONE]\n\n');

/** One event; `data` must be single-line (JSON.stringify output always is). */
export function eventFrame(id: number | undefined, data: string): Buffer {
  return Buffer.from(id === undefined ? `data: ${data}\n\n` : `id: ${id}\ndata: ${data}\n\n`);
}

/** `Last-Event-ID` as a sequence number, when it is one. */
export function lastEventId(header: string | undefined): number | undefined {
  if (header === undefined || !/^\d{1,15}$/.test(header.trim())) return undefined;
  return Number(header.trim());
}

/** The last event of a stream the server ends at shutdown: an error a reader can tell from a network fault. */
export function shutdownFrame(message: string): Buffer {
  return eventFrame(
    undefined,
    JSON.stringify({ error: { message, type: 'server_error', code: 'shutting_down' } }),
  );
}
