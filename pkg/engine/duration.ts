/** Go duration strings (`720h`, `1h30m`, `250ms`) as Kubernetes users write them in Query specs. */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/y;

/** Milliseconds of a Go duration; throws with the offending text when it is not one. */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  let total = 0;
  let pos = 0;
  PART.lastIndex = 0;
  while (pos < text.length) {
    PART.lastIndex = pos;
    const m = PART.exec(text);
    if (!m) throw new Error(`invalid duration "${text}": expected e.g. 30s, 5m or 720h`);
    total += Number(m[1]) * (UNIT_MS[m[2] as string] ?? 0);
    pos = PART.lastIndex;
  }
  if (pos === 0) throw new Error(`invalid duration "${text}": expected e.g. 30s, 5m or 720h`);
  return total;
}

/** A duration from a spec field, with its default; a malformed value is reported with the field name. */
export function durationField(value: string | undefined, fallback: string, field: string): number {
  try {
    return parseDuration(value ?? fallback);
  } catch (err) {
    throw new Error(`${field}: ${(err as Error).message}`);
  }
}
