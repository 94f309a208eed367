import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../log/index.ts';
import { decodeExport, type ExportInput } from './decode.ts';
import { ThreadDecoder } from './decoder.ts';
import { batchTail } from './span-batch.ts';

const logger = createLogger({ level: 'silent' });
const span = (i: number) => ({ traceId: 'a'.repeat(32), spanId: `${i}`.padStart(16, '1'), name: `s${i}` });
const body = JSON.stringify({
  resourceSpans: [{ scopeSpans: [{ spans: [span(1), span(2), { name: 'bad' }] }] }],
});
const input = (b: Uint8Array, over: Partial<ExportInput> = {}): ExportInput => ({
  body: b,
  proto: false,
  gzip: false,
  maxBytes: 1 << 20,
  ...over,
});

const open: ThreadDecoder[] = [];
afterEach(async () => {
  for (const d of open.splice(0)) await d.close();
});

describe('ThreadDecoder', () => {
  it('decodes on its thread exactly as inline, plain and gzip, refusals included', async () => {
    const d = new ThreadDecoder(logger);
    open.push(d);
    await d.started();
    const cases = [
      input(Buffer.from(body)),
      input(gzipSync(body), { gzip: true }),
      input(Buffer.from('{nope')),
      input(Buffer.from(`{"resourceSpans":${'['.repeat(200)}${']'.repeat(200)}}`)),
      input(gzipSync('x'.repeat(5000)), { gzip: true, maxBytes: 1024 }),
    ];
    for (const c of cases) {
      const inline = decodeExport({ ...c, body: Uint8Array.from(c.body) });
      expect(await d.decode(c)).toEqual(inline);
    }
    const ok = await d.decode(input(Buffer.from(body)));
    // The spans' bytes crossed by transfer, intact.
    expect(ok.ok && [0, 1].map((i) => JSON.parse(`{"sequence":1,${batchTail(ok.batch, i)}`).name)).toEqual([
      's1',
      's2',
    ]);
    expect(ok.ok && ok.rejected).toBe(1);
  });

  it('answers what was queued on a thread that died with 503, and starts a new one', async () => {
    const d = new ThreadDecoder(logger, new URL('./testdata/dying-worker.ts', import.meta.url));
    open.push(d);
    await d.started();
    expect((await d.decode(input(Buffer.from(body)))).ok).toBe(true);
    const dying = await d.decode(input(Buffer.from(body), { maxBytes: 13 }));
    expect(dying).toMatchObject({ ok: false, status: 503, code: 'decoder_unavailable' });
    expect((await d.decode(input(Buffer.from(body)))).ok).toBe(true);
  });

  it('decodes inline while its thread is starting, instead of queueing behind the start', async () => {
    // A thread that loads but never says it is ready (nor answers): every export is still decoded.
    const d = new ThreadDecoder(logger, new URL('./testdata/silent-worker.ts', import.meta.url));
    open.push(d);
    const results = await Promise.all(Array.from({ length: 5 }, () => d.decode(input(Buffer.from(body)))));
    expect(results.map((r) => r.ok && r.rejected)).toEqual([1, 1, 1, 1, 1]);
  });

  it('decodes inline once closed', async () => {
    const d = new ThreadDecoder(logger);
    await d.close();
    expect((await d.decode(input(Buffer.from(body)))).ok).toBe(true);
  });
});
