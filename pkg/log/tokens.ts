/**
 * Token formats found inside free text, replaced in time linear in the text's length.
 *
 * V8's regular expressions backtrack, so a pattern is quadratic when a failed attempt scans an
 * unbounded run and the next start position lies inside that same run (the old URL pattern
 * `\b[a-z][a-z0-9+.-]*:\/\/` rescanned all of `a-a-a-…` from every `a`: 3.4 s for 64 KB). Every
 * pattern here keeps one of these shapes:
 * - a literal prefix, then a class with a minimum count and nothing after it: a failed attempt
 *   stops within the minimum, a successful one moves past what it scanned;
 * - an unbounded run that no other start can share: whitespace after `Bearer`, a URL's userinfo
 *   (it cannot contain the `/` of a later `://`), a PEM body (its `[\s\S]*` alternative succeeds,
 *   so an attempt never fails after scanning);
 * - or a scan by hand (JWTs), where a run of base64url may hold many `\beyJ` starts and a regex
 *   would rescan the run from each.
 * `tokens.test.ts` checks each shape for linear scaling on 1 MB inputs.
 */
export const REDACTED = '[REDACTED]';

const TOKEN_PATTERNS: RegExp[] = [
  // PEM private keys; a key with no END (a text cut short) is redacted to the end of the text.
  /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z ]{0,40}PRIVATE KEY-----|[\s\S]*)/g,
  // Berth secret keys and provider API keys (OpenAI, Anthropic, GitHub, AWS, Slack, Google,
  // Hugging Face, GitLab, Groq, xAI, Stripe)
  /\bsk-svc-[A-Za-z0-9_-]{8,}/g,
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{22,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\bhf_[A-Za-z0-9]{30,}/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g,
  /\bgsk_[A-Za-z0-9]{20,}/g,
  /\bxai-[A-Za-z0-9]{20,}/g,
  /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/g,
];

/** Patterns whose first groups are kept (the field name, the URL up to the password). */
const KEEP_PREFIX_PATTERNS: RegExp[] = [
  // credentials in Authorization-like text
  /\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}/g,
  // `access_token=…`, `"client_secret":"…"`, `password: …` in query strings, JSON text, messages
  /\b(access_token|refresh_token|id_token|client_secret|code_verifier|client_assertion|password|api_?key|secret_key|x-api-key)(\\?["']?\s*[=:]\s*\\?["']?)[^\s"'&,;}\\]+/gi,
  // a password in a URL's userinfo: scheme://user:password@host. Anchored on `://` rather than on
  // the scheme: a scheme of unbounded length before it was the quadratic part.
  /(:\/\/[^\s/:@]+)(:)[^\s/@]+@/g,
];

/** A JWT character: base64url or the dot between segments. */
function jwtChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45 || c === 46
  );
}

/**
 * What `\beyJ[\w-]{5,}\.[\w-]{5,}\.[\w-]*` (JWS compact form) replaces in one maximal run of JWT
 * characters. A failed candidate resumes at the next segment: a later `eyJ` of the same segment
 * has the same tail and less room, so each segment is looked at a bounded number of times.
 */
function scrubJwtRun(run: string): string {
  let out = '';
  let done = 0;
  let from = 0;
  for (;;) {
    const p = run.indexOf('eyJ', from);
    if (p < 0) break;
    const before = run.charCodeAt(p - 1);
    if (p > 0 && before !== 46 && before !== 45) {
      from = p + 1; // not at a word boundary
      continue;
    }
    const dot1 = run.indexOf('.', p);
    const dot2 = dot1 < 0 ? -1 : run.indexOf('.', dot1 + 1);
    if (dot2 < 0) break; // no later candidate has two dots after it either
    if (dot1 - p < 8 || dot2 - dot1 - 1 < 5) {
      from = dot1;
      continue;
    }
    const dot3 = run.indexOf('.', dot2 + 1);
    const end = dot3 < 0 ? run.length : dot3;
    out += `${run.slice(done, p)}${REDACTED}`;
    done = end;
    from = end;
  }
  return done === 0 ? run : out + run.slice(done);
}

/**
 * JWTs by hand: each `eyJ` found with indexOf is widened to its maximal run, the run is scrubbed
 * and the search goes on after it, so every character is looked at a bounded number of times.
 */
export function scrubJwts(text: string): string {
  let at = text.indexOf('eyJ');
  if (at < 0) return text;
  let out = '';
  let done = 0; // text before this is in `out`
  while (at >= 0) {
    let start = at;
    while (start > done && jwtChar(text.charCodeAt(start - 1))) start--;
    let end = at + 3;
    while (end < text.length && jwtChar(text.charCodeAt(end))) end++;
    out += text.slice(done, start) + scrubJwtRun(text.slice(start, end));
    done = end;
    at = text.indexOf('eyJ', end);
  }
  return out + text.slice(done);
}

function replaceAll(text: string, re: RegExp, by: (m: string, ...groups: string[]) => string): string {
  re.lastIndex = 0;
  if (!re.test(text)) return text;
  re.lastIndex = 0;
  return text.replace(re, by);
}

const keepPrefix = (m: string, name: string, sep: string) =>
  m.endsWith('@') ? `${name}${sep}${REDACTED}@` : `${name}${sep}${REDACTED}`;

/** `text` with every known token format replaced; no length cap (redactString adds that). */
export function scrubTokens(text: string): string {
  let out = scrubJwts(text);
  for (const re of TOKEN_PATTERNS) out = replaceAll(out, re, () => REDACTED);
  for (const re of KEEP_PREFIX_PATTERNS) out = replaceAll(out, re, keepPrefix);
  return out;
}
