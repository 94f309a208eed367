/**
 * JSON Schema checks through Ajv (draft 2020-12 keywords it knows by default are draft-07's plus
 * what later drafts kept): an Agent's outputSchema on the model's answer, a tool's input schema on
 * arguments an approver edited. Schemas come from Agent and Tool authors, from MCP servers (untrusted)
 * and from /compat/v1 callers, so: no remote `$ref` is ever fetched (compile is synchronous and has no
 * loader), regular expressions with nested quantifiers are refused (catastrophic backtracking), and a
 * string longer than MAX_PATTERN_INPUT is never matched against a pattern (it fails instead).
 * Compiled validators are cached by the schema's JSON.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/** Strings longer than this fail any `pattern` instead of being matched (bounded regex work). */
export const MAX_PATTERN_INPUT = 8192;
const CACHE_LIMIT = 128;

/**
 * A group repeated without bound that holds a quantifier or an alternation (`(a+)+`, `(\w*)*`,
 * `(a|aa)+`): the shapes of exponential backtracking. Conservative: it also refuses harmless ones
 * such as `(cat|dog)+` (write `(?:cat|dog){1,20}` or a character class) rather than admit a bad one.
 */
export function nestedQuantifier(pattern: string): boolean {
  const stack: boolean[] = []; // per open group: does it contain a quantifier?
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '[') {
      // Skip a character class: its contents are not quantifiers or groups.
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      continue;
    }
    if (ch === '(') stack.push(false);
    else if (ch === ')') {
      const inner = stack.pop() ?? false;
      const next = pattern[i + 1];
      const unbounded =
        next === '*' || next === '+' || (next === '{' && /^\{\d*,\}/.test(pattern.slice(i + 1)));
      if (inner && unbounded) return true;
      const quantified = unbounded || next === '{' || next === '?';
      if (stack.length && (inner || quantified)) stack[stack.length - 1] = true;
    } else if ((ch === '*' || ch === '+' || ch === '{' || ch === '|') && stack.length)
      stack[stack.length - 1] = true;
  }
  return false;
}

class GuardedRegExp {
  readonly #re: RegExp;
  constructor(pattern: string, flags: string) {
    if (nestedQuantifier(pattern))
      throw new Error(`pattern ${JSON.stringify(pattern.slice(0, 80))} nests quantifiers (refused)`);
    this.#re = new RegExp(pattern, flags);
  }
  test(s: string): boolean {
    return s.length <= MAX_PATTERN_INPUT && this.#re.test(s);
  }
  /** Ajv keys compiled patterns by this: two patterns must never share one. */
  toString(): string {
    return this.#re.toString();
  }
}

/** Ajv's regular expression engine: `code` names it in standalone code, which is never generated. */
const guardedRegExp = Object.assign((p: string, f: string) => new GuardedRegExp(p, f), {
  code: 'new RegExp',
});

const ajv = new Ajv({
  allErrors: true,
  strict: false,
  // Validation errors are read, never the data echoed back in full.
  verbose: false,
  code: { regExp: guardedRegExp },
});
const cache = new Map<string, ValidateFunction>();

/** One violation, as a path and a message (`/age: must be integer`). */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** The validator of `schema`; throws an Error saying why the schema is not usable. */
export function compileSchema(schema: unknown): ValidateFunction {
  const key = JSON.stringify(schema);
  const hit = cache.get(key);
  if (hit) return hit;
  if (!schema || typeof schema !== 'object' || Array.isArray(schema))
    throw new Error('a JSON Schema must be an object');
  // Ajv keeps schemas by $id: a second schema with the same $id would be refused, so none is kept.
  const { $id: _id, $schema: _s, ...rest } = schema as Record<string, unknown>;
  let fn: ValidateFunction;
  try {
    fn = ajv.compile(rest);
  } catch (err) {
    throw new Error(`not a usable JSON Schema: ${(err as Error).message}`);
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, fn);
  return fn;
}

function issuesOf(errors: ErrorObject[] | null | undefined): SchemaIssue[] {
  return (errors ?? []).slice(0, 20).map((e) => ({
    path: e.instancePath || '/',
    message: e.message ?? e.keyword,
  }));
}

/** The violations of `value` against `schema` (empty: valid); throws when the schema is not usable. */
export function schemaIssues(schema: unknown, value: unknown): SchemaIssue[] {
  const validate = compileSchema(schema);
  return validate(value) ? [] : issuesOf(validate.errors);
}

/** `/age: must be integer; /name: must have required property 'name'` (at most the first 5). */
export function describeIssues(issues: SchemaIssue[]): string {
  const shown = issues.slice(0, 5).map((i) => `${i.path}: ${i.message}`);
  return issues.length > 5 ? `${shown.join('; ')}; and ${issues.length - 5} more` : shown.join('; ');
}
