/**
 * A judge model's rating out of its reply: a JSON object `{"score": 0.8, "reasoning": "…"}` (models
 * wrap it in prose or code fences), else the first number of the text when it is 0..1.
 */
export function parseRating(text: string): { score: number; reasoning: string } {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (json) {
    try {
      const o = JSON.parse(json) as { score?: unknown; reasoning?: unknown };
      if (typeof o.score === 'number' && o.score >= 0 && o.score <= 1)
        return { score: o.score, reasoning: typeof o.reasoning === 'string' ? o.reasoning : text };
    } catch {
      // not JSON after all: fall back to the first number
    }
  }
  const n = Number(/\d+(?:\.\d+)?/.exec(text)?.[0]);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new Error(`the judge gave no rating 0..1: ${text.slice(0, 120)}`);
  return { score: n, reasoning: text };
}

/** What the judge is told: rate OUTPUT against INPUT (and CRITERIA), answering JSON only. */
export const JUDGE_SYSTEM_PROMPT = [
  'You are an impartial judge. Rate how well the OUTPUT answers the INPUT, from 0 (useless or wrong)',
  'to 1 (fully correct and relevant). Answer with JSON only: {"score": <0..1>, "reasoning": "<one sentence>"}.',
].join(' ');

/** The judge's user message. */
export function judgePrompt(input: string, output: string, criteria?: string): string {
  return `INPUT: ${input}\nOUTPUT: ${output}${criteria ? `\nCRITERIA: ${criteria}` : ''}`;
}
