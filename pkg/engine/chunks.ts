/**
 * Streaming chunks of one query to the broker. One long-lived `POST /stream/{query}` whose NDJSON body
 * is written line by line as the model produces chunks: the broker parses NDJSON as it arrives, so
 * clients see each chunk at once, order is kept by the single request, and a 500-token answer costs one
 * request instead of 500. `POST /stream/{query}/complete` follows only after the upload's answer, so
 * every chunk is stored before the stream is marked complete. Chunk delivery never fails the query: a
 * broker problem is logged and the answer still reaches status and memory.
 */
import type { Logger } from '../log/index.ts';
import { describeNetworkError, type EngineFetch } from './http.ts';

export interface StreamError {
  message: string;
  type: string;
  code: string;
}

export class ChunkStream {
  readonly #url: string;
  readonly #fetch: EngineFetch;
  readonly #log: Logger;
  readonly #encoder = new TextEncoder();
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #upload: Promise<void> | undefined;
  #broken = false;
  #written = 0;

  constructor(brokerUrl: string, queryName: string, fetch: EngineFetch, logger: Logger) {
    this.#url = `${brokerUrl.replace(/\/+$/, '')}/stream/${encodeURIComponent(queryName)}`;
    this.#fetch = fetch;
    this.#log = logger;
  }

  get written(): number {
    return this.#written;
  }

  write(chunk: unknown): void {
    if (this.#broken) return;
    this.#open();
    try {
      this.#controller?.enqueue(this.#encoder.encode(`${JSON.stringify(chunk)}\n`));
      this.#written++;
    } catch (err) {
      this.#fail('chunk upload closed', err);
    }
  }

  /** An error chunk in the OpenAI shape, so SSE clients end with a reason instead of a bare [DONE]. */
  error(err: StreamError): void {
    this.write({ error: err });
  }

  /** Ends the upload and marks the stream complete; never throws. */
  async complete(): Promise<void> {
    if (this.#upload) {
      try {
        this.#controller?.close();
      } catch {
        // already closed or errored: the upload promise reports why
      }
      await this.#upload;
    }
    try {
      const res = await this.#fetch(`${this.#url}/complete`, { method: 'POST' });
      await res.body?.cancel();
      if (!res.ok) this.#log.warn({ status: res.status }, 'broker refused stream completion');
    } catch (err) {
      this.#log.warn({ err: describeNetworkError(err) }, 'stream completion not delivered to the broker');
    }
  }

  #open(): void {
    if (this.#upload) return;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
    });
    this.#upload = this.#fetch(this.#url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body,
      duplex: 'half',
    } as RequestInit)
      .then(async (res) => {
        await res.body?.cancel();
        if (!res.ok) this.#fail(`broker answered HTTP ${res.status}`, undefined);
      })
      .catch((err: unknown) => this.#fail('chunk upload failed', err));
  }

  #fail(what: string, err: unknown): void {
    if (this.#broken) return;
    this.#broken = true;
    this.#log.warn(
      { err: err === undefined ? undefined : describeNetworkError(err), chunks: this.#written },
      what,
    );
  }
}
