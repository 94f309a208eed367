import { describe, expect, it } from 'vitest';
import { chunkWriter } from './chunk-writer.ts';

/** A stream double recording each write; `hold` keeps the next writes pending until released. */
function recordingStream() {
  const writes: string[] = [];
  let gate: Promise<void> | undefined;
  let open = () => {};
  return {
    writes,
    hold() {
      gate = new Promise<void>((r) => {
        open = r;
      });
    },
    release: () => open(),
    stream: {
      write: async (input: string | Uint8Array) => {
        writes.push(String(input));
        await gate;
        return undefined as never;
      },
    },
  };
}

const frames = (write: string) => write.split('\n\n').filter(Boolean);
const payload = (frame: string) => JSON.parse(frame.slice('data: '.length));

describe('chunkWriter', () => {
  it('writes the chunks queued in one burst as one write, role in the first delta only', async () => {
    const rec = recordingStream();
    const out = chunkWriter(rec.stream, 'model/m', 'q1', 1);
    void out.delta({ content: 'a' });
    void out.delta({ content: 'b' });
    await out.delta({ content: 'c' });
    expect(rec.writes).toEqual([]); // nothing before the end of the tick
    await new Promise((r) => process.nextTick(r));
    expect(rec.writes).toHaveLength(1);
    const sent = frames(rec.writes[0] as string).map(payload);
    expect(sent.map((c) => c.choices[0].delta)).toEqual([
      { role: 'assistant', content: 'a' },
      { content: 'b' },
      { content: 'c' },
    ]);
    expect(sent[0]).toMatchObject({
      id: 'q1',
      object: 'chat.completion.chunk',
      model: 'model/m',
      created: 1,
    });
    await out.delta({}, 'stop');
    await out.done();
    expect(rec.writes).toHaveLength(2);
    const tail = frames(rec.writes[1] as string);
    expect(payload(tail[0] as string).choices[0].finish_reason).toBe('stop');
    expect(tail[1]).toBe('data: [DONE]');
  });

  it('holds the relay back while a write is pending (a slow client)', async () => {
    const rec = recordingStream();
    const out = chunkWriter(rec.stream, 'model/m', 'q1', 1);
    rec.hold();
    void out.delta({ content: 'a' });
    await new Promise((r) => process.nextTick(r));
    let taken = false;
    const next = out.delta({ content: 'b' }).then(() => {
      taken = true;
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(taken).toBe(false);
    rec.release();
    await next;
    expect(taken).toBe(true);
  });

  it('ends a failed stream with the error frame and [DONE] in one write', async () => {
    const rec = recordingStream();
    const out = chunkWriter(rec.stream, 'model/m', 'q1', 1);
    await out.fail('model went away', 'server_error', 'query_failed');
    expect(rec.writes).toHaveLength(1);
    const [error, done] = frames(rec.writes[0] as string);
    expect(payload(error as string)).toMatchObject({
      error: { message: 'model went away', type: 'server_error', code: 'query_failed' },
    });
    expect(done).toBe('data: [DONE]');
  });
});
