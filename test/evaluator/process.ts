/**
 * The reference evaluator as its own process, for trying Evaluations by hand (`berth up` plus
 * manifests/samples): `node test/evaluator/process.ts [--port 9100]`. With MODEL_URL (and MODEL_CA,
 * a PEM file, for a private CA) it also judges with `parameters.mode: llm`. Prints one JSON line
 * `{url}` when listening; exits on SIGTERM or SIGINT.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startReferenceEvaluator } from './server.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '9100' } } });
const modelUrl = process.env.MODEL_URL;
const ca = process.env.MODEL_CA ? readFileSync(process.env.MODEL_CA, 'utf8') : undefined;
const evaluator = await startReferenceEvaluator({
  port: Number(values.port),
  ...(modelUrl ? { judge: { modelUrl, ca, apiKey: process.env.MODEL_API_KEY } } : {}),
});
process.stdout.write(`${JSON.stringify({ url: evaluator.url })}\n`);
const stop = () => void evaluator.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
