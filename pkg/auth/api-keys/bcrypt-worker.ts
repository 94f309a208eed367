/**
 * The thread bcrypt comparisons run on (bcrypt-pool.ts): bcryptjs is plain JavaScript, ~70 ms of
 * CPU per comparison at cost 10, which on the main thread would stall every other request.
 */
import { parentPort } from 'node:worker_threads';
import bcrypt from 'bcryptjs';

export interface CompareRequest {
  id: number;
  secret: string;
  hash: string;
}

export interface CompareReply {
  id: number;
  ok: boolean;
}

parentPort?.on('message', (m: CompareRequest) => {
  let ok = false;
  try {
    ok = bcrypt.compareSync(m.secret, m.hash);
  } catch {
    // A malformed stored hash matches nothing.
  }
  parentPort?.postMessage({ id: m.id, ok } satisfies CompareReply);
});
