import type { IncomingMessage } from 'node:http';
import { httpError } from '../errors/codes.ts';

/** A body read past its cap (the route's reader fails with it; bodyLimit answers 413). */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/** The request ended (the client went away) before its body did. */
class BodyAbortedError extends Error {
  override name = 'BodyAbortedError';
  readonly code = 'ECONNRESET';
}

/**
 * Whether `err` is a request body's read failing because the client closed the connection first:
 * ours, or Node's own (`IncomingMessage` fails its reader with ECONNRESET "aborted").
 */
export function isBodyAborted(err: unknown): boolean {
  if (err instanceof BodyAbortedError) return true;
  const e = err as { code?: unknown; message?: unknown } | undefined;
  return e?.code === 'ECONNRESET' && e.message === 'aborted';
}

/**
 * Chunked encoding lets a client send its body a byte per piece, and every piece costs Node's parser
 * and this reader a few microseconds whatever its size: a 10 MB body in one-byte pieces would keep a
 * core busy for most of a minute. Past this many pieces, a body whose pieces average under
 * MIN_AVERAGE_PIECE_BYTES is refused (a streamed NDJSON line is one piece of tens of bytes or more).
 */
const PIECES_BEFORE_CHECK = 10_000;
const MIN_AVERAGE_PIECE_BYTES = 8;

// Pieces held for a reader that is busy before the request is paused (the socket then holds the rest).
const HELD_BEFORE_PAUSE = 8;

export interface CapOptions {
  maxBytes: number;
  message: string;
  /** Called once when the body goes over `maxBytes`. */
  onOver: () => void;
}

/**
 * The Node request's body as its `data` events deliver it, counted against a cap. One promise per
 * piece and nothing between the parser and the reader: Node's own async iterator waits for a
 * `readable` event (a `nextTick` after the parser pushed) and a wrapping generator adds a turn of
 * promises per piece, which is per-line cost on a streamed NDJSON upload (docs/broker.md). A reader
 * that stops early (a bad line, a failed store) leaves the request paused rather than destroying it,
 * which would close the socket before the error is answered.
 */
export class RequestChunks implements AsyncIterableIterator<Uint8Array> {
  readonly #req: IncomingMessage;
  readonly #cap: CapOptions | undefined;
  readonly #held: Uint8Array[] = [];
  #seen = 0;
  #pieces = 0;
  #started = false;
  #ended = false;
  #failure: Error | undefined;
  #wake: (() => void) | undefined;

  constructor(req: IncomingMessage, cap?: CapOptions) {
    this.#req = req;
    this.#cap = cap;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<Uint8Array>> {
    if (!this.#started) this.#start();
    for (;;) {
      const piece = this.#held.shift();
      if (piece) {
        if (this.#held.length === 0 && this.#req.isPaused() && !this.#ended && !this.#failure)
          this.#req.resume();
        return { value: piece, done: false };
      }
      if (this.#failure) throw this.#failure;
      if (this.#ended) return { value: undefined, done: true };
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  async return(): Promise<IteratorResult<Uint8Array>> {
    this.#stop();
    // Without a `data` listener a flowing request would go on reading the upload and dropping it:
    // paused, the writer is held back by the socket until the answer (or a timeout) ends it.
    if (!this.#ended) this.#req.pause();
    this.#held.length = 0;
    this.#ended = true;
    return { value: undefined, done: true };
  }

  #start(): void {
    this.#started = true;
    const req = this.#req;
    if (req.readableEnded) {
      this.#ended = true;
      return;
    }
    for (const [event, listener] of this.#listeners()) req.on(event, listener as (arg: unknown) => void);
  }

  #stop(): void {
    for (const [event, listener] of this.#listeners())
      this.#req.off(event, listener as (arg: unknown) => void);
  }

  #listeners(): Array<[string, (arg: never) => void]> {
    return [
      ['data', this.#onData],
      ['end', this.#onEnd],
      ['error', this.#onError],
      ['close', this.#onClose],
    ];
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #onData = (piece: Uint8Array): void => {
    this.#seen += piece.byteLength;
    const refused = this.#refusal();
    if (refused) {
      this.#fail(refused);
      return;
    }
    this.#held.push(piece);
    if (this.#held.length >= HELD_BEFORE_PAUSE) this.#req.pause();
    this.#signal();
  };

  /** Why the body read so far is refused (over the cap, or in too many tiny pieces), if it is. */
  #refusal(): Error | undefined {
    const cap = this.#cap;
    if (cap && this.#seen > cap.maxBytes) {
      cap.onOver();
      return new BodyTooLargeError(cap.message);
    }
    if (++this.#pieces > PIECES_BEFORE_CHECK && this.#seen < this.#pieces * MIN_AVERAGE_PIECE_BYTES)
      return httpError(
        'invalid_request',
        `the request body came in more than ${PIECES_BEFORE_CHECK} pieces averaging under ${MIN_AVERAGE_PIECE_BYTES} bytes (chunked encoding); send it in larger pieces`,
      );
    return undefined;
  }

  #onEnd = (): void => {
    this.#ended = true;
    this.#stop();
    this.#signal();
  };

  #onError = (err: Error): void => this.#fail(err);

  #onClose = (): void => {
    if (!this.#ended) this.#fail(new BodyAbortedError('the request was closed before its body ended'));
  };

  #fail(err: Error): void {
    if (this.#failure) return;
    this.#failure = err;
    this.#stop();
    this.#req.pause();
    this.#signal();
  }
}
