import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadOrCreateCert } from './servers.ts';

describe('metrics certificate', () => {
  it('is made in-process, without an openssl binary on PATH', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const { cert, key, selfSigned } = await loadOrCreateCert({});
      const x = new X509Certificate(cert);
      expect(selfSigned).toBe(true);
      expect(x.subjectAltName).toContain('DNS:localhost');
      expect(x.subjectAltName).toContain('IP Address:127.0.0.1');
      expect(x.checkPrivateKey((await import('node:crypto')).createPrivateKey(key))).toBe(true);
      expect(new Date(x.validTo).getTime()).toBeGreaterThan(Date.now() + 300 * 86_400_000);
    } finally {
      process.env.PATH = path;
    }
  });

  it('refuses half a configured pair', async () => {
    await expect(loadOrCreateCert({ certFile: '/tmp/x.crt' })).rejects.toThrow(
      /both a certificate and a key/,
    );
  });
});
