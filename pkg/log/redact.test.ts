import { describe, expect, it } from 'vitest';
import { createLogger, REDACTED, redact, redactString, truncateForLog } from './index.ts';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlLXBhcnQ';

describe('redaction', () => {
  it('replaces secret keys at any depth, case-insensitively', () => {
    const out = redact({
      headers: { Authorization: 'Basic abc', 'X-Api-Key': 'k' },
      a: [{ client_secret: 's' }],
    }) as any;
    expect(out.headers.Authorization).toBe(REDACTED);
    expect(out.headers['X-Api-Key']).toBe(REDACTED);
    expect(out.a[0].client_secret).toBe(REDACTED);
  });

  it('scrubs tokens embedded in free text', () => {
    const text = `token ${JWT} and sk-svc-abcdefghijkl and sk-proj-abcdefghijklmnopqrstu and Bearer abcdefghijk`;
    const out = redactString(text);
    for (const secret of [JWT, 'sk-svc-abcdefghijkl', 'sk-proj-abcdefghijklmnopqrstu', 'abcdefghijk']) {
      expect(out).not.toContain(secret);
    }
  });

  it('scrubs PEM private keys', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34\n-----END RSA PRIVATE KEY-----';
    expect(redactString(`key: ${pem}`)).toBe(`key: ${REDACTED}`);
  });

  it('applies to every line the logger writes, messages included', () => {
    const lines: string[] = [];
    const log = createLogger({ destination: { write: (line: string) => void lines.push(line) } });
    log.info({ req: { headers: { authorization: `Bearer ${JWT}` } }, password: 'hunter22' }, `got ${JWT}`);
    const all = lines.join('');
    expect(all).not.toContain(JWT);
    expect(all).not.toContain('hunter22');
    expect(all).toContain(REDACTED);
  });

  it('scrubs secret fields written as text: query strings, JSON strings, URL passwords', () => {
    const cases: Array<[string, string]> = [
      ['POST /token?access_token=opaque123&x=1', 'opaque123'],
      ['body {"client_secret":"cs-9f8e7d","grant_type":"client_credentials"}', 'cs-9f8e7d'],
      ['refresh_token: rt.abcdef', 'rt.abcdef'],
      ['code_verifier=verifier-xyz-123', 'verifier-xyz-123'],
      ['connecting to postgres://berth:s3cr3tpw@db:5432/berth', 's3cr3tpw'],
      ['x-api-key=pk-svc-0123abcd:sk-svc-AbCdEfGh12345678', 'sk-svc-AbCdEfGh12345678'],
    ];
    for (const [text, secret] of cases) {
      const out = redactString(text);
      expect(out, text).not.toContain(secret);
      expect(out, text).toContain(REDACTED);
    }
    expect(redactString('postgres://berth:pw123456@db')).toBe(`postgres://berth:${REDACTED}@db`);
    expect(redactString('grant_type=client_credentials')).toBe('grant_type=client_credentials');
  });

  it('scrubs more provider API key formats and key names', () => {
    const keys = [
      'hf_abcdefghijklmnopqrstuvwxyzABCDEF12',
      'github_pat_11ABCDEFG0123456789_abcdefghijklmnop',
      'glpat-abcdefghij0123456789',
      'gsk_abcdefghij0123456789ABCD',
      'xai-abcdefghij0123456789ABCD',
      'sk_live_abcdefghij0123456789',
    ];
    const out = redactString(`keys: ${keys.join(' ')}`);
    for (const k of keys) expect(out).not.toContain(k);
    const obj = redact({ 'api-key': 'azure-key-1', private_key: 'pk', secret_hash: '$2b$10$x' }) as any;
    expect(obj['api-key']).toBe(REDACTED);
    expect(obj.private_key).toBe(REDACTED);
    expect(obj.secret_hash).toBe(REDACTED);
  });

  it('truncates operation data to 48 characters', () => {
    expect(truncateForLog('x'.repeat(100))).toBe(`${'x'.repeat(48)}…`);
    expect(truncateForLog('short')).toBe('short');
  });
});
