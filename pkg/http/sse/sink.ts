import type { ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';
import { requestIdOf } from '../request-id/index.ts';
import type { Flushable, FlushScheduler } from './flush.ts';
import { CONNECTED_FRAME, SSE_HEADERS } from './frame.ts';

export type CloseReason = 'client' | 'slow' | 'server' | 'done';

/**
 * One SSE connection, written straight to Node's socket response: no web-stream hop per frame,
 * which is what makes one-serialization fan-out to thousands of watchers cheap. A subscriber whose
 * socket buffer grows past `maxBufferedBytes` is cut off (it can resume with Last-Event-ID) instead
 * of making the process hold an unbounded backlog.
 */
export class SseSink implements Flushable {
  readonly #res: ServerResponse;
  readonly #maxBuffered: number;
  readonly #onClose: Array<(why: CloseReason) => void> = [];
  readonly #scheduler: FlushScheduler | undefined;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #closed = false;
  /** Frames after the shutdown error frame when the server ends this stream (a query stream's `[DONE]`). */
  shutdownTail: Uint8Array[] = [];

  constructor(res: ServerResponse, maxBufferedBytes: number, scheduler?: FlushScheduler) {
    this.#res = res;
    this.#maxBuffered = maxBufferedBytes;
    this.#scheduler = scheduler;
    res.on('close', () => this.#finish('client'));
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes one frame; false when the sink is (now) closed. */
  write(frame: Uint8Array): boolean {
    if (this.#closed) return false;
    if (this.#res.writableLength + this.#pendingBytes > this.#maxBuffered) {
      this.close('slow');
      return false;
    }
    if (!this.#scheduler) {
      this.#res.write(frame);
      return true;
    }
    this.#pending.push(frame);
    this.#pendingBytes += frame.byteLength;
    this.#scheduler.mark(this);
    return true;
  }

  /** Writes the frames coalesced since the last flush as one socket write. */
  flush(): void {
    if (this.#pending.length === 0 || this.#closed) return;
    const data = this.#pending.length === 1 ? (this.#pending[0] as Uint8Array) : Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#res.write(data);
  }

  /** Resolves when the socket buffer has room again (used while replaying large backlogs). */
  drained(): Promise<void> {
    this.flush();
    if (this.#closed || !this.#res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#res.off('drain', done);
        this.#res.off('close', done);
        resolve();
      };
      this.#res.once('drain', done);
      this.#res.once('close', done);
    });
  }

  onClose(cb: (why: CloseReason) => void): void {
    if (this.#closed) cb('client');
    else this.#onClose.push(cb);
  }

  /** Ends the stream, after `last` frames when given. A slow subscriber's socket is destroyed. */
  close(why: CloseReason = 'server', last: Uint8Array[] = []): void {
    if (this.#closed) return;
    if (why !== 'slow') this.flush();
    for (const f of last) this.#res.write(f);
    if (why === 'slow') this.#res.destroy();
    else this.#res.end();
    this.#finish(why);
  }

  #finish(why: CloseReason): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const cb of this.#onClose.splice(0)) cb(why);
  }
}

/**
 * Starts an SSE response on the Node socket behind `c` (status, headers, `: connected`) and returns
 * its sink. The route then returns `RESPONSE_ALREADY_SENT`. An aborted request closes the sink at once.
 */
export function openSse(c: Context, maxBufferedBytes: number, scheduler?: FlushScheduler): SseSink {
  const res = (c.env as HttpBindings).outgoing;
  const rid = requestIdOf(c);
  res.writeHead(200, rid ? { ...SSE_HEADERS, 'x-request-id': rid } : SSE_HEADERS);
  res.flushHeaders();
  const sink = new SseSink(res, maxBufferedBytes, scheduler);
  c.req.raw.signal.addEventListener('abort', () => sink.close('client'), { once: true });
  sink.write(CONNECTED_FRAME);
  return sink;
}
