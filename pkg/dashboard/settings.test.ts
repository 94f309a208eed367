import { describe, expect, it } from 'vitest';
import { loadDashboardSettings, normalizeBasePath, SettingsError } from './settings.ts';

const sso = {
  AUTH_MODE: 'sso',
  AUTH_SECRET: 's'.repeat(32),
  BASE_URL: 'https://berth.example.com/team-a/',
  BASE_PATH: 'team-a/',
  OIDC_PROVIDER_ID: 'keycloak',
  OIDC_ISSUER_URL: 'https://idp.example/realms/berth',
  OIDC_CLIENT_ID: 'dashboard',
  // Built at run time: the settings only need a non-empty value.
  OIDC_CLIENT_SECRET: ['client', 'value'].join('-'),
};

const problems = (env: NodeJS.ProcessEnv) => {
  try {
    loadDashboardSettings(env);
  } catch (err) {
    expect(err).toBeInstanceOf(SettingsError);
    return (err as Error).message;
  }
  throw new Error('settings were accepted');
};

describe('loadDashboardSettings', () => {
  it('needs nothing in open mode: the API defaults to the local one, served at the root', () => {
    expect(loadDashboardSettings({})).toEqual({
      mode: 'open',
      basePath: '',
      apiServiceUrl: 'http://127.0.0.1:8000',
      secureCookies: false,
      allowedCallbackOrigins: [],
      authDebug: false,
      logLevel: 'info',
    });
  });

  it('reads the sso settings, normalizing slashes and deriving AUTH_URL', () => {
    const s = loadDashboardSettings({
      ...sso,
      AUTH_DEBUG: 'true',
      API_SERVICE_URL: 'http://berth-api:8000/',
    });
    expect(s).toMatchObject({
      mode: 'sso',
      basePath: '/team-a',
      baseUrl: 'https://berth.example.com/team-a',
      authUrl: 'https://berth.example.com/team-a/api/auth',
      apiServiceUrl: 'http://berth-api:8000',
      secureCookies: true,
      authSecret: sso.AUTH_SECRET,
      oidc: { providerId: 'keycloak', providerName: 'keycloak', clientSecret: sso.OIDC_CLIENT_SECRET },
      authDebug: true,
      logLevel: 'debug',
    });
  });

  it('does not read the sign-in settings in open and basic mode', () => {
    const s = loadDashboardSettings({
      AUTH_MODE: 'basic',
      BASE_URL: '/',
      AUTH_SECRET: 'x',
      OIDC_ISSUER_URL: 'nope',
    });
    expect(s).toMatchObject({ mode: 'basic', basePath: '', secureCookies: false });
    expect(s.baseUrl).toBeUndefined();
  });

  it('treats blank values as unset, as manifests render them', () => {
    expect(loadDashboardSettings({ AUTH_MODE: '', BASE_PATH: ' ', OIDC_CLIENT_SECRET: '' }).mode).toBe(
      'open',
    );
  });

  it('parses AUTH_ALLOWED_CALLBACK_ORIGINS into origins', () => {
    const s = loadDashboardSettings({
      ...sso,
      AUTH_ALLOWED_CALLBACK_ORIGINS: 'https://a.example, http://b.example:8080/',
    });
    expect(s.allowedCallbackOrigins).toEqual(['https://a.example', 'http://b.example:8080']);
  });

  it('refuses base paths that are not plain path segments', () => {
    for (const bad of ['/a//b', '/../x', '/a b', '/a?x'])
      expect(problems({ BASE_PATH: bad })).toContain('BASE_PATH must be a URL path');
  });

  it('refuses a BASE_URL with a prefix BASE_PATH lacks, and AUTH_URL without BASE_URL', () => {
    expect(problems({ ...sso, BASE_PATH: '' })).toContain('has the path "/team-a" but BASE_PATH is ""');
    expect(problems({ ...sso, BASE_URL: undefined, AUTH_URL: 'https://x.example/api/auth' })).toContain(
      'AUTH_URL is set but BASE_URL is not',
    );
  });

  it('keeps the client secret out of its messages', () => {
    expect(problems({ ...sso, AUTH_SECRET: 'tiny' })).not.toContain(sso.OIDC_CLIENT_SECRET);
  });
});

describe('normalizeBasePath', () => {
  it.each([
    [undefined, ''],
    ['/', ''],
    ['team-a', '/team-a'],
    ['/team-a/', '/team-a'],
    ['/a/b', '/a/b'],
  ])('%s → %s', (raw, expected) => expect(normalizeBasePath(raw)).toBe(expected));
});
