/**
 * How hard the adversarial suite pushes: `make test` runs each case at its short length, `make
 * test-faults` (BERTH_FAULTS=long) at full length — more rounds of hostile traffic, more generated
 * spellings and races — so the long run finds what is intermittent.
 */
export const SECURITY_SCALE = process.env.BERTH_FAULTS === 'long' ? 10 : 1;

/** `n` at the short length, `n × SECURITY_SCALE` at full length. */
export const atLength = (n: number): number => n * SECURITY_SCALE;

/** A small seeded generator (mulberry32): generated cases are the same in every run of a length. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` spellings of `word` with each letter's case chosen at random. */
export function caseVariants(word: string, count: number, seed = 26): string[] {
  const rnd = seeded(seed);
  return Array.from({ length: count }, () =>
    [...word].map((ch) => (rnd() < 0.5 ? ch.toLowerCase() : ch.toUpperCase())).join(''),
  );
}
