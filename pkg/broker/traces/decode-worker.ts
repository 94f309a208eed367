import { parentPort } from 'node:worker_threads';
import { decodeExport, type ExportInput } from './decode.ts';
import { batchTransfer } from './span-batch.ts';

/** The decoding thread of `decoder.ts`: one export in, its decoded spans (or refusal) out. */
parentPort?.on('message', ({ id, input }: { id: number; input: ExportInput }) => {
  const result = decodeExport(input);
  // The spans' bytes move to the event loop without a copy.
  parentPort?.postMessage({ id, result }, result.ok ? batchTransfer(result.batch) : []);
});

// Loaded: the event loop starts sending exports here (until now it decoded them itself).
parentPort?.postMessage({ ready: true });
