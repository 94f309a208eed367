/**
 * The reference evaluator: an HTTP server implementing the evaluator contract of
 * docs/evaluations.md — `POST …/evaluate` with `{type, input, output, parameters?, query?}` answers
 * `{score, passed, reasoning, metrics}`. `parameters.mode` picks the scoring: `exact`, `contains`,
 * `regex` (against `parameters.expected`) or `llm` (LLM-as-judge against a chat model). Tests also
 * script failures (`failNext`, `dropNext`), slow answers (`parameters.delayMs`), and stop and start
 * it on the same port; every request is recorded, with whether the caller went away.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createJudge, type JudgeConfig } from './judge.ts';
import { BadParameters, RULE_MODES, type RuleMode, scoreByRule, type Verdict } from './rules.ts';

export interface EvaluateBody {
  type: string;
  input: string;
  output: string;
  parameters?: Record<string, string>;
  query?: Record<string, unknown>;
}

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: EvaluateBody;
  /** The caller closed the connection before the answer (cancel, deletion, timeout). */
  aborted?: boolean;
}

export interface ReferenceEvaluator {
  /** Base URL, e.g. http://127.0.0.1:1234 (an Evaluator's spec.address.value; any path prefix works). */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** The next `n` requests answer `status` (default 503). */
  failNext(n: number, status?: number): void;
  /** The next `n` requests lose their connection without an answer. */
  dropNext(n: number): void;
  /** Stops listening (the port refuses connections) and drops open connections. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Resolves after `ms`, or at once when the caller goes away. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    const early = () => {
      clearTimeout(t);
      resolve();
    };
    signal.addEventListener('abort', early, { once: true });
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function parseBody(raw: string): EvaluateBody {
  let b: Partial<EvaluateBody>;
  try {
    b = JSON.parse(raw) as Partial<EvaluateBody>;
  } catch {
    throw new BadParameters('the body is not JSON');
  }
  if (typeof b.input !== 'string' || typeof b.output !== 'string' || typeof b.type !== 'string')
    throw new BadParameters('type, input and output must be strings');
  return b as EvaluateBody;
}

export async function startReferenceEvaluator(
  opts: { judge?: JudgeConfig; port?: number } = {},
): Promise<ReferenceEvaluator> {
  const judge = opts.judge ? createJudge(opts.judge) : undefined;
  const requests: RecordedRequest[] = [];
  let fail = { n: 0, status: 503 };
  let drop = 0;

  async function score(body: EvaluateBody, signal: AbortSignal): Promise<Verdict> {
    const p = body.parameters ?? {};
    const mode = p.mode ?? 'exact';
    if (mode === 'llm') {
      if (!judge) throw new BadParameters('mode llm needs a judge model (this evaluator has none)');
      return judge.judge({ input: body.input, output: body.output, parameters: p }, signal);
    }
    if (!RULE_MODES.includes(mode as RuleMode))
      throw new BadParameters(`unknown mode ${mode}: use exact, contains, regex or llm`);
    return scoreByRule(mode as RuleMode, body.output, p);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method !== 'POST' || !path.endsWith('/evaluate')) return json(res, 404, { error: 'not found' });
    const parts: Buffer[] = [];
    for await (const p of req) parts.push(p as Buffer);
    const ac = new AbortController();
    let rec: RecordedRequest | undefined;
    res.on('close', () => {
      if (!res.writableEnded) {
        ac.abort();
        if (rec) rec.aborted = true;
      }
    });
    try {
      const body = parseBody(Buffer.concat(parts).toString('utf8'));
      rec = { path, headers: req.headers, body };
      requests.push(rec);
      if (drop > 0) {
        drop--;
        req.socket.destroy(); // a dropped connection: no status line at all
        return;
      }
      if (fail.n > 0) {
        fail.n--;
        return json(res, fail.status, { error: `scripted failure (HTTP ${fail.status})` });
      }
      const delay = Number(body.parameters?.delayMs ?? 0);
      if (delay > 0) await sleep(delay, ac.signal);
      if (ac.signal.aborted) return;
      json(res, 200, await score(body, ac.signal));
    } catch (err) {
      if (ac.signal.aborted) return;
      if (err instanceof BadParameters) return json(res, 400, { error: err.message });
      json(res, 502, { error: (err as Error).message });
    }
  }

  let server: Server | undefined;
  let port = opts.port ?? 0;
  const listen = async () => {
    server = createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server?.once('error', reject);
      server?.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.address() as AddressInfo).port;
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = undefined;
      if (!s) return resolve();
      s.closeAllConnections();
      s.close(() => resolve());
    });
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    failNext: (n, status = 503) => {
      fail = { n, status };
    },
    dropNext: (n) => {
      drop = n;
    },
    stop,
    start: listen,
    close: async () => {
      await stop();
      await judge?.close();
    },
  };
}
