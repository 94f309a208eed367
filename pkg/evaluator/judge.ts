/**
 * The built-in evaluator's judge (`mode: llm`): asks a Model of the namespace — through the engine's
 * own model clients, so its key, headers, CA and redirect rules are the engine's — to rate the
 * output 0..1 as JSON. The demo model answers offline (pkg/engine/demo-model.ts, JSON mode).
 */
import type { ResourceLookup } from '../engine/contract.ts';
import type { ModelClients } from '../engine/model-client.ts';
import { JUDGE_SYSTEM_PROMPT, judgePrompt, parseRating } from './rating.ts';
import { BadParameters, threshold, type Verdict } from './rules.ts';

/** The Model a judge asks when the parameters name none: the one `berth up` creates. */
export const DEFAULT_JUDGE_MODEL = 'demo';

export interface ModelJudgeOptions {
  lookup: ResourceLookup;
  models: ModelClients;
  /** The namespace whose Models may judge (the one `berth up` serves). */
  namespace: string;
  /** Bound of one model call. */
  timeoutMs?: number;
}

export interface JudgeRequest {
  input: string;
  output: string;
  parameters: Record<string, string>;
}

/** A judge model that failed (unreachable, 5xx, no rating): the evaluator answers 502, retried. */
export class JudgeFailed extends Error {}

export function createModelJudge(o: ModelJudgeOptions) {
  return async (req: JudgeRequest, signal: AbortSignal): Promise<Verdict> => {
    const name = req.parameters.model ?? DEFAULT_JUDGE_MODEL;
    const pass = threshold(req.parameters.threshold, 0.5);
    const model = o.lookup.model(o.namespace, name);
    if (!model)
      throw new BadParameters(`mode llm: Model ${o.namespace}/${name} not found (parameters.model)`);
    let client: ReturnType<ModelClients['client']>;
    try {
      client = o.models.client(model);
    } catch (err) {
      throw new BadParameters(`mode llm: ${(err as Error).message}`);
    }
    let text: string;
    try {
      const res = await client.chat.completions.create(
        {
          model: model.spec.model,
          messages: [
            { role: 'system', content: JUDGE_SYSTEM_PROMPT },
            { role: 'user', content: judgePrompt(req.input, req.output, req.parameters.criteria) },
          ],
          response_format: { type: 'json_object' },
          stream: false,
        },
        { signal, timeout: o.timeoutMs ?? 60_000 },
      );
      text = res.choices[0]?.message.content ?? '';
    } catch (err) {
      throw new JudgeFailed(`the judge Model ${name} failed: ${(err as Error).message}`);
    }
    let rating: { score: number; reasoning: string };
    try {
      rating = parseRating(text);
    } catch (err) {
      throw new JudgeFailed((err as Error).message);
    }
    return { ...rating, passed: rating.score >= pass, metrics: { threshold: pass } };
  };
}
