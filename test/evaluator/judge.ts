/**
 * LLM-as-judge mode of the reference evaluator: asks an OpenAI-compatible model (the fake model in
 * tests) to rate the output from 0 to 1 and explain, and reads the rating from its answer: a JSON
 * object `{"score": 0.8, "reasoning": "…"}`, or else the first number in the text.
 */
import { Agent, fetch } from 'undici';
import { parseRating } from '../../pkg/evaluator/rating.ts';
import { BadParameters, threshold, type Verdict } from './rules.ts';

export interface JudgeConfig {
  /** Base URL of the chat completions API, e.g. https://127.0.0.1:1234/v1. */
  modelUrl: string;
  /** Extra CA (PEM) the model's certificate is signed by. */
  ca?: string;
  apiKey?: string;
}

export interface JudgeRequest {
  input: string;
  output: string;
  parameters: Record<string, string>;
}

const SYSTEM = [
  'You are an impartial judge. Rate how well the OUTPUT answers the INPUT, from 0 (useless or wrong)',
  'to 1 (fully correct and relevant). Answer with JSON only: {"score": <0..1>, "reasoning": "<one sentence>"}.',
].join(' ');

export function createJudge(cfg: JudgeConfig) {
  const dispatcher = new Agent(cfg.ca ? { connect: { ca: cfg.ca } } : {});
  return {
    async judge(req: JudgeRequest, signal: AbortSignal): Promise<Verdict> {
      const criteria = req.parameters.criteria ? `\nCRITERIA: ${req.parameters.criteria}` : '';
      const res = await fetch(`${cfg.modelUrl.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        dispatcher,
        signal,
        headers: {
          'content-type': 'application/json',
          ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: req.parameters.model ?? 'judge',
          messages: [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: `INPUT: ${req.input}\nOUTPUT: ${req.output}${criteria}` },
          ],
        }),
      });
      const body = (await res.json()) as { choices?: Array<{ message?: { content?: string } }> };
      if (!res.ok) throw new Error(`the judge model answered HTTP ${res.status}: ${JSON.stringify(body)}`);
      const rating = parseRating(body.choices?.[0]?.message?.content ?? '');
      return {
        ...rating,
        passed: rating.score >= threshold(req.parameters.threshold, 0.5),
        metrics: { judgeHttpStatus: res.status },
      };
    },
    close: () => dispatcher.close(),
  };
}

export { BadParameters, parseRating };
