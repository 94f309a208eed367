import { describe, expect, it } from 'vitest';
import { engineUseProblem, isMarketplaceCredential, SECRET_USAGE_LABEL } from './secret-usage.ts';

const opted = { [SECRET_USAGE_LABEL]: 'engine' };
const secret = (name: string, labels: Record<string, string> = {}, type = 'Opaque') => ({
  type,
  metadata: { name, labels },
});

describe('which Secrets the engine may use', () => {
  it('only those labelled berth.dev/usage=engine', () => {
    expect(engineUseProblem(secret('key', opted))).toBeUndefined();
    expect(engineUseProblem(secret('key'))).toBe(
      'secret key is not usable by the engine: add label berth.dev/usage=engine',
    );
    for (const value of ['Engine', 'true', '', 'engine '])
      expect(engineUseProblem(secret('k', { [SECRET_USAGE_LABEL]: value }))).toBeDefined();
    expect(engineUseProblem({ metadata: { name: 'no-labels' } })).toContain('add label');
  });

  it('never API-key, marketplace credential or cluster credential Secrets, whatever their labels', () => {
    expect(engineUseProblem(secret('pk-svc-x', opted, 'berth.dev/api-key'))).toContain('Berth API key');
    expect(engineUseProblem(secret('marketplace-source-x-auth', opted))).toContain('marketplace');
    expect(
      engineUseProblem(secret('renamed', { ...opted, 'berth.dev/marketplace-credential': 'true' })),
    ).toContain('marketplace');
    for (const type of ['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token'])
      expect(engineUseProblem(secret('sa', opted, type))).toContain('cluster credential');
  });

  it('recognises marketplace credentials by label or by the name pattern', () => {
    expect(isMarketplaceCredential(secret('marketplace-source-a.b-auth'))).toBe(true);
    expect(isMarketplaceCredential(secret('x', { 'berth.dev/marketplace-credential': 'true' }))).toBe(true);
    for (const name of ['marketplace-source--auth', 'marketplace-source-x', 'my-marketplace-source-x-auth'])
      expect(isMarketplaceCredential(secret(name)), name).toBe(false);
  });
});
