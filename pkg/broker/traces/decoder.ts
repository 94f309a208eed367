import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../log/index.ts';
import { type DecodedExport, decodeExport, type ExportInput, refusal } from './decode.ts';

/** Decodes OTLP exports, on the calling thread or on one of its own. */
export interface OtlpDecoder {
  decode(input: ExportInput): Promise<DecodedExport>;
  close(): Promise<void>;
}

// Exports queued for the thread past which the next ones are decoded inline: the thread is busy
// enough, and a queue must not hold an unbounded number of bodies.
const MAX_QUEUED = 64;
// The thread's young generation: V8 would size it from the machine's memory (hundreds of MB on a
// large node); an export's garbage is short-lived and a few of them fit in this.
const YOUNG_MB = 48;
// The worker's entry beside this module, whichever form runs (TypeScript source or `dist/`).
const WORKER_URL = new URL(`./decode-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

export function otlpDecoder(mode: 'auto' | 'on' | 'off', logger: Logger): OtlpDecoder {
  const thread = mode === 'on' || (mode === 'auto' && availableParallelism() > 1);
  return thread ? new ThreadDecoder(logger) : { decode: async (i) => decodeExport(i), close: async () => {} };
}

/**
 * Decoding — `JSON.parse` of a large export above all — off the event loop: it no longer delays
 * every other request of the broker, and it runs beside them on a second core (agent-shaped exports
 * ingest ~1.4× faster on 2 cores, docs/broker.md). The thread starts on the first export (an idle
 * broker keeps its footprint) and again after it died; what was queued on a dead thread is
 * answered 503. Until a starting thread says it is ready (its isolate up and its modules loaded,
 * tens of milliseconds to a second on a busy machine), exports are decoded inline: queued behind
 * the start-up they waited for it, and a fresh broker answered ~300 exports in its first second.
 */
export class ThreadDecoder implements OtlpDecoder {
  readonly #logger: Logger;
  readonly #url: URL;
  readonly #pending = new Map<number, (r: DecodedExport) => void>();
  #worker: Worker | undefined;
  #ready = false;
  readonly #onReady: Array<() => void> = [];
  #next = 0;
  #closed = false;

  /** `url`: the worker's entry (tests give one that can be made to die). */
  constructor(logger: Logger, url = WORKER_URL) {
    this.#logger = logger;
    this.#url = url;
  }

  decode(input: ExportInput): Promise<DecodedExport> {
    if (this.#closed || this.#pending.size >= MAX_QUEUED) return Promise.resolve(decodeExport(input));
    const worker = this.#worker ?? this.#start();
    if (!this.#ready) return Promise.resolve(decodeExport(input));
    const id = this.#next++;
    const { body } = input;
    // The body's own buffer moves to the thread without a copy (a view into a shared one is copied).
    const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    const transfer = whole && body.buffer instanceof ArrayBuffer ? [body.buffer] : [];
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      worker.postMessage({ id, input }, transfer);
    });
  }

  /** Starts the thread if it is not running and resolves once it takes exports. */
  started(): Promise<void> {
    if (!this.#worker) this.#start();
    if (this.#ready) return Promise.resolve();
    return new Promise((resolve) => this.#onReady.push(resolve));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#worker?.terminate();
  }

  #start(): Worker {
    const worker = new Worker(this.#url, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB } });
    // Never what keeps the process alive: the HTTP server does, while there are requests.
    worker.unref();
    this.#ready = false;
    worker.on('message', ({ id, result, ready }: { id: number; result: DecodedExport; ready?: true }) => {
      if (ready) {
        if (this.#worker !== worker) return;
        this.#ready = true;
        for (const r of this.#onReady.splice(0)) r();
        return;
      }
      const done = this.#pending.get(id);
      this.#pending.delete(id);
      done?.(result);
    });
    worker.on('error', (err) => this.#logger.error({ err }, 'OTLP decoding thread failed'));
    worker.on('exit', (code) => {
      if (this.#worker === worker) {
        this.#worker = undefined;
        this.#ready = false;
      }
      if (!this.#closed)
        this.#logger.warn({ code, queued: this.#pending.size }, 'OTLP decoding thread exited');
      const stopped = refusal('decoder_unavailable', 'the OTLP decoding thread stopped; retry the export');
      for (const done of this.#pending.values()) done(stopped);
      this.#pending.clear();
    });
    this.#worker = worker;
    return worker;
  }
}
