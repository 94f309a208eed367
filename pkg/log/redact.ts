/**
 * Secret scrubbing applied to every log record, whatever its depth. Key names are matched
 * case-insensitively; string values are scanned for tokens of known formats so that a secret
 * embedded in a message or an error text is caught too.
 */
const SECRET_KEYS = new Set(
  [
    'authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie',
    'x-api-key',
    'x-auth-token',
    'x-csrf-token',
    'password',
    'token',
    'secret',
    'apikey',
    'api_key',
    'access_token',
    'refresh_token',
    'id_token',
    'client_secret',
    'code_verifier',
    'secret_key',
    'secretkey',
    'bearertoken',
    'api-key',
    'x-goog-api-key',
    'private_key',
    'privatekey',
    'client_assertion',
    'secret_hash',
    'session_token',
    'x-amz-security-token',
  ].map((k) => k.toLowerCase()),
);

export const REDACTED = '[REDACTED]';

const TOKEN_PATTERNS: RegExp[] = [
  // JWT / JWS compact form
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  // PEM private keys
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
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
  // a password in a URL's userinfo: scheme://user:password@host
  /\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@]+)(:)[^\s/@]+@/gi,
];

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase());
}

export function redactString(value: string): string {
  let out = value;
  for (const re of TOKEN_PATTERNS) {
    re.lastIndex = 0;
    if (re.test(out)) {
      re.lastIndex = 0;
      out = out.replace(re, REDACTED);
    }
  }
  for (const re of KEEP_PREFIX_PATTERNS) {
    re.lastIndex = 0;
    if (re.test(out)) {
      re.lastIndex = 0;
      out = out.replace(re, (m, name: string, sep: string) =>
        m.endsWith('@') ? `${name}${sep}${REDACTED}@` : `${name}${sep}${REDACTED}`,
      );
    }
  }
  return out;
}

/** Deep copy of `value` with secrets replaced. Cycles and depth are bounded. */
export function redact(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactString(value);
  if (!value || typeof value !== 'object' || depth > 8) return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1, seen));
  if (value instanceof Error) {
    return {
      type: value.name,
      message: redactString(value.message),
      stack: value.stack && redactString(value.stack),
    };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretKey(k) && v !== undefined && v !== null ? REDACTED : redact(v, depth + 1, seen);
  }
  return out;
}
