interface Choice {
  delta?: { content?: unknown } & Record<string, unknown>;
  finish_reason?: unknown;
  [k: string]: unknown;
}

/**
 * The smallest `max-chunk-size` accepted (bytes of delta content per piece). Below it a client could
 * turn one chunk into a frame per byte — each frame repeating the chunk's other fields — and make
 * the broker write hundreds of times the chunk's size.
 */
export const MIN_CHUNK_SIZE = 64;

/** Cuts `text` into pieces of at most `max` UTF-8 bytes, never inside a character; one piece at a time. */
export function* splitUtf8(text: string, max: number): Generator<string> {
  let start = 0;
  let size = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.codePointAt(i) as number;
    const units = code > 0xffff ? 2 : 1;
    const n = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (size + n > max && i > start) {
      yield text.slice(start, i);
      start = i;
      size = 0;
    }
    size += n;
    i += units;
  }
  if (i > start) yield text.slice(start, i);
}

/** True when `max-chunk-size` changes this chunk (some choice's delta content is longer). */
export function needsSplit(chunk: Record<string, unknown>, max: number): boolean {
  const choices = Array.isArray(chunk.choices) ? (chunk.choices as Choice[]) : [];
  return choices.some(
    (c) => typeof c.delta?.content === 'string' && Buffer.byteLength(c.delta.content) > max,
  );
}

/**
 * `max-chunk-size`: a chunk whose delta content is larger than `max` bytes becomes several chunks,
 * each carrying one piece of one choice; `finish_reason` and `usage` stay on the last piece. The
 * pieces are made one at a time as the caller takes them (a reader cut off stops the production);
 * a chunk within the size comes back unchanged (same object).
 */
export function* splitChunk(chunk: Record<string, unknown>, max: number): Generator<Record<string, unknown>> {
  if (!needsSplit(chunk, max)) {
    yield chunk;
    return;
  }
  const choices = chunk.choices as Choice[];
  const { usage, ...base } = chunk;
  // One piece of look-ahead: only the very last piece carries `usage`.
  let held: Record<string, unknown> | undefined;
  for (const choice of choices) {
    const content = choice.delta?.content;
    const pieces: Iterable<unknown> =
      typeof content === 'string' && content ? splitUtf8(content, max) : [content];
    let previous: unknown;
    let started = false;
    const piece = (value: unknown, last: boolean) => ({
      ...base,
      choices: [
        {
          ...choice,
          delta: { ...choice.delta, content: value },
          finish_reason: last ? (choice.finish_reason ?? null) : null,
        },
      ],
    });
    for (const p of pieces) {
      if (started) {
        if (held) yield held;
        held = piece(previous, false);
      }
      previous = p;
      started = true;
    }
    if (started) {
      if (held) yield held;
      held = piece(previous, true);
    }
  }
  if (held) yield usage !== undefined ? { ...held, usage } : held;
}
