import { parentPort } from 'node:worker_threads';

// The decoding thread, but it dies on an export whose limit is 13 bytes (decoder.test.ts): this
// listener comes first, so the thread exits before it would answer.
parentPort?.on('message', ({ input }: { input: { maxBytes: number } }) => {
  if (input.maxBytes === 13) process.exit(3);
});
await import('../decode-worker.ts');
