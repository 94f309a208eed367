/**
 * CPU of one model call as the engine makes it: the OpenAI SDK against the fake model (its own
 * process, HTTPS), with the engine client's fetch (undici's request API underneath) beside undici's
 * WHATWG fetch on the same dispatcher. Sequential calls, so the figure is this process's CPU per
 * call. Usage: node test/bench/engine/model-call.ts [--calls 2000] [--rounds 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { fetch as undiciFetch } from 'undici';
import { createHttpClient } from '../../../pkg/engine/http.ts';
import { startFakeModelProcess } from '../support.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const dir = mkdtempSync(join(tmpdir(), 'berth-bench-model-call-'));
const fake = await startFakeModelProcess(join(dir, 'ca.pem'));
const http = createHttpClient({ ca: fake.ca });
const whatwg = (url: string | URL, init?: RequestInit) =>
  undiciFetch(url, { ...(init as object), dispatcher: http.dispatcher }) as unknown as Promise<Response>;
const sdk = (fetch: unknown) =>
  new OpenAI({ apiKey: 'k', baseURL: fake.url, maxRetries: 0, fetch: fetch as typeof globalThis.fetch });
const clients = { 'request API': sdk(http.fetch), 'WHATWG fetch': sdk(whatwg) };

async function calls(client: OpenAI, n: number, stream: boolean): Promise<void> {
  for (let i = 0; i < n; i++) {
    const messages = [{ role: 'user' as const, content: `q${i}` }];
    if (!stream) {
      const res = await client.chat.completions.create({ model: 'bench', messages });
      if (!res.choices[0]?.message.content) throw new Error('empty answer');
      continue;
    }
    let text = '';
    for await (const chunk of await client.chat.completions.create({
      model: 'bench',
      messages,
      stream: true,
    }))
      text += chunk.choices[0]?.delta.content ?? '';
    if (!text) throw new Error('empty stream');
  }
}

const results: Record<string, number[]> = {};
try {
  for (const stream of [false, true])
    for (let round = 0; round < ROUNDS; round++)
      for (const [name, client] of Object.entries(clients)) {
        await calls(client, Math.min(300, CALLS), stream); // warm-up: JIT, keep-alive connection
        const before = process.cpuUsage();
        await calls(client, CALLS, stream);
        const used = process.cpuUsage(before);
        const key = `${stream ? 'streaming' : 'non-streaming'} ${name}`;
        results[key] = [...(results[key] ?? []), (used.user + used.system) / CALLS];
      }
  console.log(
    `model call CPU through the OpenAI SDK, µs per call (this process), ${CALLS} calls × ${ROUNDS}`,
  );
  for (const [key, us] of Object.entries(results))
    console.log(`${key.padEnd(28)} ${us.map((u) => u.toFixed(0).padStart(5)).join(' ')}`);
  console.log(JSON.stringify({ bench: 'model-call', calls: CALLS, results }));
} finally {
  fake.proc.kill('SIGTERM');
  await http.close();
  rmSync(dir, { recursive: true, force: true });
}
