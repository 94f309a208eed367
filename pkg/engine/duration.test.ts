import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.ts';
import { modelUrlProblem } from './http.ts';

describe('parseDuration', () => {
  it('reads Go durations', () => {
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('720h')).toBe(2_592_000_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('0')).toBe(0);
  });

  it('rejects anything else with the text', () => {
    for (const bad of ['', '5', 'm', '5 m', '5mins', '-5m'])
      expect(() => parseDuration(bad)).toThrow(/invalid duration/);
  });
});

describe('modelUrlProblem', () => {
  it('allows https and in-cluster http only', () => {
    expect(modelUrlProblem('https://api.openai.com/v1')).toBeUndefined();
    expect(modelUrlProblem('http://vllm.models.svc.cluster.local:8000/v1')).toBeUndefined();
    expect(modelUrlProblem('http://api.openai.com/v1')).toMatch(/must be https/);
    expect(modelUrlProblem('http://evil.svc.cluster.local.example.com/v1')).toMatch(/must be https/);
    expect(modelUrlProblem('ftp://x')).toMatch(/must be https/);
    expect(modelUrlProblem('not a url')).toMatch(/not an absolute URL/);
  });
});
