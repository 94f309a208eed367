import { parentPort } from 'node:worker_threads';

// A decoding thread that never gets ready (decoder.test.ts): it takes messages and answers none.
parentPort?.on('message', () => {});
