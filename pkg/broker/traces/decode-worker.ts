import { parentPort } from 'node:worker_threads';
import { decodeExport, type ExportInput } from './decode.ts';

/** The decoding thread of `decoder.ts`: one export in, its decoded spans (or refusal) out. */
parentPort?.on('message', ({ id, input }: { id: number; input: ExportInput }) => {
  parentPort?.postMessage({ id, result: decodeExport(input) });
});
