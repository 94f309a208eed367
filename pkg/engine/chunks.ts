/**
 * Streaming chunks of one query to the broker. One long-lived `POST /stream/{query}` whose NDJSON body
 * is written line by line as the model produces chunks: the broker parses NDJSON as it arrives, so
 * clients see each chunk at once, order is kept by the single request, and a 500-token answer costs one
 * request instead of 500. `POST /stream/{query}/complete` follows only after the upload's answer, so
 * every chunk is stored before the stream is marked complete. Chunk delivery never fails the query: a
 * broker problem is logged and the answer still reaches status and memory.
 */
import type { Writable } from 'node:stream';
import { TickCoalescer } from '../http/coalesce/index.ts';
import type { Logger } from '../log/index.ts';
import type { BrokerRoute } from './brokers.ts';
import { describeNetworkError, type HttpClient } from './http.ts';

export interface StreamError {
  message: string;
  type: string;
  code: string;
}

export class ChunkStream {
  readonly #url: string;
  readonly #broker: BrokerRoute;
  readonly #http: Pick<HttpClient, 'upload' | 'send'>;
  readonly #log: Logger;
  #body: Writable | undefined;
  #upload: Promise<void> | undefined;
  #broken = false;
  #written = 0;
  /**
   * Lines queued in this tick, written together at its end (one socket write per burst): the SDK
   * yields the chunks of one read in a row (microtasks).
   */
  readonly #lines = new TickCoalescer((lines) => {
    if (this.#body && !this.#body.destroyed && !this.#body.writableEnded) this.#body.write(lines);
  });

  constructor(
    broker: BrokerRoute,
    queryName: string,
    http: Pick<HttpClient, 'upload' | 'send'>,
    logger: Logger,
  ) {
    this.#broker = broker;
    this.#url = `${broker.url.replace(/\/+$/, '')}/stream/${encodeURIComponent(queryName)}`;
    this.#http = http;
    this.#log = logger;
  }

  get written(): number {
    return this.#written;
  }

  write(chunk: unknown): void {
    if (this.#broken) return;
    const body = this.#open();
    if (body.destroyed || body.writableEnded) {
      this.#fail('chunk upload closed', undefined);
      return;
    }
    this.#lines.push(`${JSON.stringify(chunk)}\n`);
    this.#written++;
  }

  /** An error chunk in the OpenAI shape, so SSE clients end with a reason instead of a bare [DONE]. */
  error(err: StreamError): void {
    this.write({ error: err });
  }

  /**
   * Ends the upload without marking the stream complete: a paused query's readers keep waiting,
   * and its resumed run appends with an upload of its own. Never throws.
   */
  async detach(): Promise<void> {
    if (!this.#upload) return;
    this.#lines.flush();
    this.#body?.end();
    await this.#upload;
  }

  /** Ends the upload and marks the stream complete; never throws. */
  async complete(): Promise<void> {
    if (this.#upload) {
      this.#lines.flush();
      this.#body?.end();
      await this.#upload;
    }
    try {
      const res = await this.#http.send(`${this.#url}/complete`, {
        method: 'POST',
        headers: this.#broker.headers(),
      });
      if (res.status < 200 || res.status >= 300)
        this.#log.warn({ status: res.status }, 'broker refused stream completion');
    } catch (err) {
      this.#log.warn({ err: describeNetworkError(err) }, 'stream completion not delivered to the broker');
    }
  }

  #open(): Writable {
    if (this.#body) return this.#body;
    const { body, status } = this.#http.upload(this.#url, 'application/x-ndjson', this.#broker.headers());
    this.#body = body;
    this.#upload = status
      .then((code) => {
        if (code < 200 || code >= 300) this.#fail(`broker answered HTTP ${code}`, undefined);
      })
      .catch((err: unknown) => this.#fail('chunk upload failed', err));
    return body;
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
