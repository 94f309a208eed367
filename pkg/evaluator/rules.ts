/**
 * Rule-based scoring of the built-in evaluator (and of the reference one in test/evaluator): the
 * output against an expected value, exactly, as a substring or as a regular expression. Each rule
 * gives 1 or 0; `passed` is score ≥ threshold.
 */
export type RuleMode = 'exact' | 'contains' | 'regex';
export const RULE_MODES: readonly RuleMode[] = ['exact', 'contains', 'regex'];

export interface Verdict {
  score: number;
  passed: boolean;
  reasoning: string;
  metrics?: Record<string, number>;
}

/** A parameter the request lacks or got wrong: the evaluator answers 400 with this message. */
export class BadParameters extends Error {}

export interface RuleParameters {
  /** The expected value (exact, contains) or the pattern (regex). */
  expected?: string;
  /** `false` compares case-insensitively (exact, contains); regex flags come from `flags`. */
  caseSensitive?: string;
  flags?: string;
  /** Score needed to pass; default 1 (rules score 0 or 1). */
  threshold?: string;
}

export function threshold(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new BadParameters(`threshold must be 0..1, got ${value}`);
  return n;
}

export function scoreByRule(mode: RuleMode, output: string, p: RuleParameters): Verdict {
  const expected = p.expected;
  if (expected === undefined) throw new BadParameters(`mode ${mode} needs parameters.expected`);
  const fold = p.caseSensitive === 'false' ? (s: string) => s.toLowerCase() : (s: string) => s;
  const quoted = JSON.stringify(expected);
  let hit: boolean;
  let how: [string, string];
  switch (mode) {
    case 'exact':
      hit = fold(output.trim()) === fold(expected.trim());
      how = [`equals ${quoted}`, `does not equal ${quoted}`];
      break;
    case 'contains':
      hit = fold(output).includes(fold(expected));
      how = [`contains ${quoted}`, `does not contain ${quoted}`];
      break;
    case 'regex': {
      let re: RegExp;
      try {
        re = new RegExp(expected, p.flags ?? '');
      } catch (err) {
        throw new BadParameters(`parameters.expected is not a regular expression: ${(err as Error).message}`);
      }
      hit = re.test(output);
      how = [`matches ${re}`, `does not match ${re}`];
      break;
    }
  }
  const score = hit ? 1 : 0;
  return {
    score,
    passed: score >= threshold(p.threshold, 1),
    reasoning: `the output ${hit ? how[0] : how[1]}`,
    metrics: { outputLength: output.length },
  };
}
