import { describe, expect, it } from 'vitest';
import { optimiseHotPathsSooner } from './index.ts';

// What the threshold does to latency is measured, not unit-tested: test/bench/broker/rows.ts
// (chunk delivery on a fresh process; docs/broker.md).
describe('optimiseHotPathsSooner', () => {
  it('leaves a threshold given on the command line alone, in either spelling', () => {
    expect(optimiseHotPathsSooner(['--invocation-count-for-turbofan=5'])).toBe(false);
    expect(optimiseHotPathsSooner(['--max-semi-space-size=16', '--invocation_count_for_turbofan=5'])).toBe(
      false,
    );
  });

  it('sets it otherwise', () => {
    expect(optimiseHotPathsSooner(['--max-semi-space-size=16'])).toBe(true);
    expect(optimiseHotPathsSooner([])).toBe(true);
  });
});
