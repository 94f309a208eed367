import { jsonStringEnd } from '../../http/index.ts';

/**
 * The text of each span object in an OTLP/JSON export, grouped as the export nests them
 * (`resourceSpans[i].scopeSpans[j].spans[k]` → `groups[i][j][k]`), so a span can be stored as the
 * client wrote it instead of re-serialized from its parsed form: re-serializing was a fifth of the
 * ingest time of agent-shaped exports.
 *
 * Runs only on text `JSON.parse` accepted, so it needs no validation: it tracks nesting and the
 * keys that open the three arrays. Whenever the text could mean something else than it reads — one
 * of those keys twice in an object, or written with an escape — it answers undefined and the
 * caller re-serializes, as it does for protobuf exports.
 */
export type SpanGroups = string[][][];

export interface ExportScan {
  /** Whether arrays and objects nest deeper than the limit somewhere. */
  tooDeep: boolean;
  /** The spans' text, unless the text could read differently from what was parsed. */
  groups: SpanGroups | undefined;
}

const QUOTE = 0x22;
const COLON = 0x3a;
// Where the containers on the way to a span sit: root object, resourceSpans array, a resource's
// object, scopeSpans array, a scope's object, spans array; a span object opens at depth 6.
const PATH_KEYS = [undefined, 'resourceSpans', undefined, 'scopeSpans', undefined, 'spans'] as const;
const SPAN_DEPTH = 6;

export function rawSpanGroups(text: string): SpanGroups | undefined {
  return scanExport(text, Number.POSITIVE_INFINITY).groups;
}

/**
 * One pass over an export's text for the spans' text and the depth limit (the JSON depth limit of
 * other routes scans every body for its depth alone; this route is exempt from that scan).
 */
export function scanExport(text: string, maxDepth: number): ExportScan {
  let groups: SpanGroups | undefined = [];
  // Per open container (its depth is the array's length): whether it is on the path to spans.
  const onPath: boolean[] = [];
  // Path keys seen in the innermost open object on the path (a repeat is refused).
  const seen: Set<string>[] = [];
  let key: string | undefined;
  let spanStart = -1;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === QUOTE) {
      const end = jsonStringEnd(text, i);
      if (onPath.length <= SPAN_DEPTH && isKey(text, end)) {
        key = text.slice(i + 1, end);
        if (key.includes('\\')) groups = undefined;
        const expected = PATH_KEYS[onPath.length];
        if (expected !== undefined && key === expected && onPath[onPath.length - 1]) {
          const s = seen[onPath.length - 1] as Set<string>;
          if (s.has(key)) groups = undefined;
          s.add(key);
        }
      }
      i = end;
    } else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      const depth = onPath.length;
      if (depth >= maxDepth) return { tooDeep: true, groups: undefined };
      const parentOnPath = depth === 0 || (onPath[depth - 1] as boolean);
      const isObject = ch === 0x7b;
      const here = depth < SPAN_DEPTH && parentOnPath && pathStep(depth, isObject, key);
      if (here && isObject) {
        seen[depth] = new Set();
        if (depth === 2) groups?.push([]);
        else if (depth === 4) groups?.at(-1)?.push([]);
      }
      if (depth === SPAN_DEPTH && parentOnPath && isObject) spanStart = i;
      onPath.push(here);
      key = undefined;
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) {
      onPath.pop();
      if (onPath.length === SPAN_DEPTH && spanStart >= 0) {
        groups
          ?.at(-1)
          ?.at(-1)
          ?.push(text.slice(spanStart, i + 1));
        spanStart = -1;
      }
    }
  }
  return { tooDeep: false, groups };
}

/** Whether the container opened at `depth` lies on the path to spans. */
function pathStep(depth: number, isObject: boolean, key: string | undefined): boolean {
  if (depth % 2 === 0) return isObject; // root, a resource, a scope: objects (in arrays)
  return !isObject && key === PATH_KEYS[depth]; // the arrays, under their key
}

/** Whether the string ending at `end` is an object key (the next non-blank character is ':'). */
function isKey(text: string, end: number): boolean {
  for (let i = end + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === COLON) return true;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return false;
}
