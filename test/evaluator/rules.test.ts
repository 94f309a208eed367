/** The reference evaluator's scoring on its own: rules, the judge's rating parser, bad parameters. */
import { describe, expect, it } from 'vitest';
import { parseRating } from './judge.ts';
import { BadParameters, scoreByRule } from './rules.ts';

describe('rule modes', () => {
  it('exact compares trimmed text, case-sensitively unless told otherwise', () => {
    expect(scoreByRule('exact', ' Paris ', { expected: 'Paris' })).toMatchObject({ score: 1, passed: true });
    expect(scoreByRule('exact', 'paris', { expected: 'Paris' })).toMatchObject({
      score: 0,
      passed: false,
      reasoning: 'the output does not equal "Paris"',
    });
    expect(scoreByRule('exact', 'paris', { expected: 'Paris', caseSensitive: 'false' }).score).toBe(1);
  });

  it('contains and regex', () => {
    expect(scoreByRule('contains', 'It is Paris.', { expected: 'Paris' })).toMatchObject({
      score: 1,
      reasoning: 'the output contains "Paris"',
    });
    expect(scoreByRule('regex', 'Answer: 42', { expected: '^answer: \\d+$', flags: 'i' }).passed).toBe(true);
    expect(scoreByRule('regex', 'Answer: x', { expected: '\\d' }).passed).toBe(false);
  });

  it('a threshold of 0 passes anything; missing or broken parameters are the caller’s error', () => {
    expect(scoreByRule('exact', 'a', { expected: 'b', threshold: '0' }).passed).toBe(true);
    expect(() => scoreByRule('exact', 'a', {})).toThrow(BadParameters);
    expect(() => scoreByRule('regex', 'a', { expected: '(' })).toThrow(/not a regular expression/);
    expect(() => scoreByRule('exact', 'a', { expected: 'a', threshold: '2' })).toThrow(/threshold/);
  });
});

describe('the judge’s rating', () => {
  it('reads a JSON rating, else the first number 0..1', () => {
    expect(parseRating('{"score": 0.8, "reasoning": "close"}')).toEqual({ score: 0.8, reasoning: 'close' });
    expect(parseRating('Sure! ```{"score":1}```')).toMatchObject({ score: 1 });
    expect(parseRating('I would say 0.3 overall')).toMatchObject({ score: 0.3 });
    expect(() => parseRating('seven out of ten')).toThrow(/no rating/);
    expect(() => parseRating('7 out of 10')).toThrow(/no rating/);
  });
});
