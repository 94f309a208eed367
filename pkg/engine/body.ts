/**
 * Reading upstream answers under a byte cap: a whole answer up to its cap (beyond it the call
 * fails and the connection is dropped), the start of an error answer (the rest is never read), and
 * a stream (SSE) that fails once it has carried more than its cap.
 */
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AnswerTooLarge, type UpstreamKind } from './upstream.ts';

/** The whole body, or AnswerTooLarge (and the body destroyed) once it passes `max` bytes. */
export async function readCapped(body: Readable, max: number, kind: UpstreamKind): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop (the throw) destroys the body: the rest is never read.
    if (size > max) throw new AnswerTooLarge(kind, max);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/**
 * At most `max` bytes from the start of the body; the body is destroyed after them, so the rest of
 * a huge or endless error answer is never read (its connection is closed, not drained).
 */
export async function readPrefix(body: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const take = Math.min(chunk.length, max - size);
    chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
    size += take;
    // Leaving the loop destroys the body (the async iterator's return()).
    if (size >= max) break;
  }
  return Buffer.concat(chunks, size);
}

/** A body nobody reads (a bodiless status): let it end or go, without an unhandled 'error'. */
export function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.resume();
}

/**
 * The body as it arrives, failing with AnswerTooLarge once more than `max` bytes went through.
 * Destroying the returned stream (a consumer that stops reading) destroys the body too.
 */
export function cappedStream(body: Readable, max: number, kind: UpstreamKind): Readable {
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > max) done(new AnswerTooLarge(kind, max));
      else done(null, chunk);
    },
  });
  // The pipeline's own promise only reports; the error reaches the reader through `counter`.
  pipeline(body, counter).catch(() => undefined);
  return counter;
}
