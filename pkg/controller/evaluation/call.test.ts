import { describe, expect, it, vi } from 'vitest';
import { type CallOptions, callEvaluator, evaluateUrl } from './call.ts';

type Step = Response | Error | ((signal: AbortSignal) => Promise<Response>);

/** A fetch that plays `steps` in order and records each call. */
function scripted(...steps: Step[]) {
  const calls: Array<{ url: string; body: unknown; headers: Record<string, string> }> = [];
  const fetch = async (url: string | URL, init?: RequestInit) => {
    calls.push({
      url: String(url),
      body: JSON.parse(String(init?.body)),
      headers: init?.headers as Record<string, string>,
    });
    const step = steps.shift();
    if (!step) throw new Error('no more scripted answers');
    if (step instanceof Error) throw step;
    return typeof step === 'function' ? step(init?.signal as AbortSignal) : step;
  };
  return { fetch, calls };
}

const ok = (body: unknown) => new Response(JSON.stringify(body), { status: 200 });
const status = (s: number, text = '') => new Response(text, { status: s });
const refused = () =>
  Object.assign(new TypeError('fetch failed'), { cause: new Error('connect ECONNREFUSED') });

function opts(fetch: CallOptions['fetch'], extra: Partial<CallOptions> = {}): CallOptions {
  return {
    fetch,
    url: 'http://ev/evaluate',
    body: { type: 'direct', input: 'q', output: 'a' },
    signal: new AbortController().signal,
    deadline: Date.now() + 5000,
    timeoutText: '5s',
    retryInitialMs: 1,
    retryMaxMs: 5,
    ...extra,
  };
}

describe('evaluateUrl', () => {
  it('appends /evaluate and keeps the path and query of the address', () => {
    expect(evaluateUrl('http://ev:8080')).toBe('http://ev:8080/evaluate');
    expect(evaluateUrl('https://ev/api/v1/')).toBe('https://ev/api/v1/evaluate');
    expect(evaluateUrl('http://ev/x?key=1')).toBe('http://ev/x/evaluate?key=1');
  });
});

describe('callEvaluator', () => {
  it('posts the contract body with the headers and returns the validated answer', async () => {
    const { fetch, calls } = scripted(
      ok({ score: 0.75, passed: true, reasoning: 'close', metrics: { n: 1 } }),
    );
    const r = await callEvaluator(opts(fetch, { headers: { authorization: 'Bearer t' } }));
    expect(r).toEqual({
      result: { score: 0.75, passed: true, reasoning: 'close', metrics: { n: 1 } },
      attempts: 1,
    });
    expect(calls[0]?.body).toEqual({ type: 'direct', input: 'q', output: 'a' });
    expect(calls[0]?.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer t',
    });
  });

  it('retries 5xx, 429 and refused or dropped connections, saying what failed before each retry', async () => {
    const retries: string[] = [];
    const { fetch } = scripted(status(503, 'busy'), status(429), refused(), ok({ score: 1, passed: true }));
    const r = await callEvaluator(opts(fetch, { onRetry: (n, problem) => retries.push(`${n} ${problem}`) }));
    expect(r.attempts).toBe(4);
    expect(retries).toEqual(['1 HTTP 503: busy', '2 HTTP 429', '3 fetch failed: connect ECONNREFUSED']);
  });

  it('fails at once on a 4xx and on an answer that breaks the contract', async () => {
    await expect(callEvaluator(opts(scripted(status(400, '{"error":"bad mode"}')).fetch))).rejects.toThrow(
      'evaluator call failed: HTTP 400: {"error":"bad mode"}',
    );
    await expect(callEvaluator(opts(scripted(ok({ score: 2, passed: 'yes' })).fetch))).rejects.toThrow(
      /breaks the contract: score: .*; passed: /,
    );
    await expect(
      callEvaluator(opts(scripted(new Response('<html>', { status: 200 })).fetch)),
    ).rejects.toThrow('the answer is not JSON');
  });

  it('gives up at the deadline with the attempts and the last problem', async () => {
    const { fetch } = scripted(...Array.from({ length: 100 }, () => status(500)));
    await expect(
      callEvaluator(opts(fetch, { deadline: Date.now() + 60, retryInitialMs: 20, retryMaxMs: 20 })),
    ).rejects.toThrow(/did not answer within 5s \(\d+ attempts; last: HTTP 500\)/);
  });

  it('a slow answer past the deadline is abandoned and reported as a timeout', async () => {
    let aborted = false;
    const hang = (signal: AbortSignal) =>
      new Promise<Response>((_, reject) =>
        signal.addEventListener('abort', () => {
          aborted = true;
          reject(signal.reason);
        }),
      );
    await expect(callEvaluator(opts(scripted(hang).fetch, { deadline: Date.now() + 50 }))).rejects.toThrow(
      'did not answer within 5s (1 attempt)',
    );
    expect(aborted).toBe(true);
  });

  it('is a timeout when the deadline timer fires before the wall clock reaches the deadline', async () => {
    // Timers run on the monotonic clock; freezing Date.now() makes the timer fire "early" for sure.
    const frozen = Date.now();
    const now = vi.spyOn(Date, 'now').mockReturnValue(frozen);
    try {
      const hang = (signal: AbortSignal) =>
        new Promise<Response>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      await expect(callEvaluator(opts(scripted(hang).fetch, { deadline: frozen + 30 }))).rejects.toThrow(
        'did not answer within 5s (1 attempt)',
      );
    } finally {
      now.mockRestore();
    }
  });

  it('an abort drops the call in flight and rejects with the abort reason, also between retries', async () => {
    const ac = new AbortController();
    const hang = (signal: AbortSignal) =>
      new Promise<Response>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    const pending = callEvaluator(opts(scripted(hang).fetch, { signal: ac.signal }));
    ac.abort(new Error('evaluation canceled'));
    await expect(pending).rejects.toThrow('evaluation canceled');

    const between = new AbortController();
    const waiting = callEvaluator(
      opts(scripted(status(503)).fetch, {
        signal: between.signal,
        retryInitialMs: 10_000,
        retryMaxMs: 10_000,
        onRetry: () => between.abort(new Error('evaluation deleted')),
      }),
    );
    await expect(waiting).rejects.toThrow('evaluation deleted');
  });
});
