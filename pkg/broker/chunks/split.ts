interface Choice {
  delta?: { content?: unknown } & Record<string, unknown>;
  finish_reason?: unknown;
  [k: string]: unknown;
}

/** Cuts `text` into pieces of at most `max` UTF-8 bytes, never inside a character. */
export function splitUtf8(text: string, max: number): string[] {
  const out: string[] = [];
  let piece = '';
  let size = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (size + n > max && piece) {
      out.push(piece);
      piece = '';
      size = 0;
    }
    piece += ch;
    size += n;
  }
  if (piece) out.push(piece);
  return out;
}

/**
 * `max-chunk-size`: a chunk whose delta content is larger than `max` bytes becomes several chunks,
 * each carrying one piece of one choice; `finish_reason` and `usage` stay on the last piece.
 * Chunks within the size come back unchanged (same object).
 */
export function splitChunk(chunk: Record<string, unknown>, max: number): Record<string, unknown>[] {
  const choices = Array.isArray(chunk.choices) ? (chunk.choices as Choice[]) : [];
  const long = choices.some(
    (c) => typeof c.delta?.content === 'string' && Buffer.byteLength(c.delta.content) > max,
  );
  if (!long) return [chunk];
  const { usage, ...base } = chunk;
  const out: Record<string, unknown>[] = [];
  for (const choice of choices) {
    const content = choice.delta?.content;
    const pieces = typeof content === 'string' && content ? splitUtf8(content, max) : [content];
    pieces.forEach((piece, i) => {
      const last = i === pieces.length - 1;
      out.push({
        ...base,
        choices: [
          {
            ...choice,
            delta: { ...choice.delta, content: piece },
            finish_reason: last ? (choice.finish_reason ?? null) : null,
          },
        ],
      });
    });
  }
  if (usage !== undefined && out.length) out[out.length - 1] = { ...out[out.length - 1], usage };
  return out;
}
