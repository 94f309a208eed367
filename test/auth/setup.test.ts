import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupAuth } from '../../pkg/auth/index.ts';
import { createNamespace, kubeConfig } from '../support/kube.ts';
import { captureLogs } from './support.ts';

let ns: string;
const stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  ns = await createNamespace('auth-setup');
});

afterAll(async () => {
  for (const stop of stops) await stop();
});

describe('setupAuth from the environment', () => {
  it('an invalid AUTH_MODE serves open and logs one warning', async () => {
    const logs = captureLogs();
    const auth = await setupAuth({
      kc: kubeConfig('gateway'),
      namespace: ns,
      logger: logs.logger,
      env: { AUTH_MODE: 'sso-please' },
      bcryptCost: 4,
    });
    stops.push(auth.stop);
    expect(auth.mode).toBe('open');
    expect(auth.jwt).toBeUndefined();
    const warnings = logs.lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn');
    expect(warnings.map((w) => w.msg)).toEqual([
      expect.stringMatching(/invalid AUTH_MODE "sso-please".*open/),
    ]);
    // The key service works in open mode too (keys are managed before auth is switched on).
    const key = await auth.apiKeys.create({ name: 'bootstrap' });
    expect((await auth.apiKeys.verify(key.public_key, key.secret_key)).ok).toBe(true);
  });

  it('sso without an issuer or audience fails at start-up instead of running open', async () => {
    const logs = captureLogs();
    const base = { kc: kubeConfig('gateway'), namespace: ns, logger: logs.logger };
    await expect(setupAuth({ ...base, env: { AUTH_MODE: 'sso' } })).rejects.toThrow(/OIDC_ISSUER_URL/);
    await expect(
      setupAuth({ ...base, env: { AUTH_MODE: 'hybrid', OIDC_ISSUER_URL: 'http://127.0.0.1:1' } }),
    ).rejects.toThrow(/OIDC_APPLICATION_ID/);
  });
});
