import { Worker } from 'node:worker_threads';
import type { CompareReply, CompareRequest } from './bcrypt-worker.ts';

// From source (.ts, Node strips the types) or from dist/ (.js): the worker sits beside this module.
const here = import.meta.url;
const WORKER_URL = new URL(`./bcrypt-worker${here.endsWith('.ts') ? '.ts' : '.js'}`, here);

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve(ok: boolean): void; reject(err: Error): void }>;
}

/**
 * bcrypt comparisons on worker threads, so the event loop keeps serving while one runs. Threads
 * start on first use and do not keep the process alive; a thread that dies fails what it held
 * (the request gets a 503 from the caller, never a pass) and is replaced on the next comparison.
 */
export class BcryptPool {
  private readonly size: number;
  private readonly slots: Slot[] = [];
  private nextId = 0;

  constructor(size: number) {
    this.size = Math.max(1, size);
  }

  compare(secret: string, hash: string): Promise<boolean> {
    const slot = this.leastBusy();
    const id = this.nextId++;
    return new Promise<boolean>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, secret, hash } satisfies CompareRequest);
    });
  }

  async stop(): Promise<void> {
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private leastBusy(): Slot {
    if (this.slots.length < this.size) return this.spawn();
    return this.slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_URL), pending: new Map() };
    slot.worker.unref();
    slot.worker.on('message', (m: CompareReply) => {
      const p = slot.pending.get(m.id);
      slot.pending.delete(m.id);
      p?.resolve(m.ok);
    });
    const fail = (err: Error) => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      for (const p of slot.pending.values()) p.reject(err);
      slot.pending.clear();
    };
    slot.worker.on('error', fail);
    slot.worker.on('exit', (code) => fail(new Error(`bcrypt worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }
}
