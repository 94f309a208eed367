/**
 * `berth dashboard` as a process: settings validated at start (a missing or invalid one exits
 * non-zero with a message naming the variable), AUTH_MODE falling back to `open` with a warning,
 * the port from `--port` or PORT, and a clean exit on SIGTERM.
 */
import { describe, expect, it } from 'vitest';
import { spawnBerth } from '../support/process.ts';

/** The test runner's environment without anything the dashboard reads. */
function env(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(AUTH_|OIDC_|BASE_|API_SERVICE_URL|PORT$)/.test(k)),
  );
  return { ...clean, LOG_LEVEL: 'info', ...extra };
}

async function refused(extra: NodeJS.ProcessEnv): Promise<string> {
  const p = spawnBerth(['dashboard', '--port', '0'], env(extra));
  expect(await p.exited).toBe(2);
  return p.output();
}

describe('berth dashboard settings', () => {
  it('names every variable sso needs when they are missing', async () => {
    const out = await refused({ AUTH_MODE: 'sso' });
    expect(out).toContain('berth dashboard: invalid configuration:');
    for (const name of ['AUTH_SECRET', 'BASE_URL', 'OIDC_PROVIDER_ID', 'OIDC_ISSUER_URL', 'OIDC_CLIENT_ID'])
      expect(out).toContain(`${name} is required when AUTH_MODE=sso`);
  });

  it('names each invalid value, all at once', async () => {
    const out = await refused({
      AUTH_MODE: 'hybrid',
      AUTH_SECRET: 'short',
      BASE_URL: 'not a url',
      OIDC_PROVIDER_ID: 'has/slash',
      OIDC_ISSUER_URL: 'ftp://idp.example',
      OIDC_CLIENT_ID: 'dashboard',
      API_SERVICE_URL: 'berth-api:8000',
      AUTH_DEBUG: 'yes',
      LOG_LEVEL: 'loud',
    });
    for (const message of [
      'AUTH_SECRET must be at least 32 characters',
      'BASE_URL must be an absolute http(s) URL',
      'OIDC_PROVIDER_ID must be letters, digits',
      'OIDC_ISSUER_URL must be an absolute http(s) URL',
      'API_SERVICE_URL must be an absolute http(s) URL',
      'AUTH_DEBUG must be "true" or "false"',
      'LOG_LEVEL must be one of',
    ])
      expect(out).toContain(message);
  });

  it('refuses a BASE_URL, BASE_PATH and AUTH_URL that disagree (sign-in would loop)', async () => {
    const out = await refused({
      AUTH_MODE: 'sso',
      AUTH_SECRET: 'x'.repeat(40),
      BASE_URL: 'https://berth.example.com/team-a',
      BASE_PATH: '/team-b',
      AUTH_URL: 'https://berth.example.com/api/auth',
      OIDC_PROVIDER_ID: 'keycloak',
      OIDC_ISSUER_URL: 'https://idp.example/realms/berth',
      OIDC_CLIENT_ID: 'dashboard',
      AUTH_ALLOWED_CALLBACK_ORIGINS: 'https://ok.example, https://bad.example/with/path',
    });
    expect(out).toContain(
      'BASE_URL https://berth.example.com/team-a has the path "/team-a" but BASE_PATH is "/team-b"',
    );
    expect(out).toContain('AUTH_URL must be https://berth.example.com/team-a/api/auth');
    expect(out).toContain('AUTH_ALLOWED_CALLBACK_ORIGINS: "https://bad.example/with/path" is not an origin');
    expect(out).not.toContain('ok.example');
  });

  it('falls back to open with a warning on an invalid AUTH_MODE, takes PORT, and exits cleanly', async () => {
    const p = spawnBerth(['dashboard'], env({ AUTH_MODE: 'kerberos', PORT: '0' }));
    const line = JSON.parse(await p.waitForLine(/"msg":"dashboard listening"/, 30_000));
    expect(line.authMode).toBe('open');
    expect(p.output()).toMatch(/"level":"warn".*invalid AUTH_MODE \\"kerberos\\": falling back to open/);
    expect((await fetch(`http://127.0.0.1:${line.port}/health`)).status).toBe(200);
    p.proc.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  });

  it('takes --port over PORT', async () => {
    const p = spawnBerth(['dashboard', '--port', '0'], env({ PORT: '1' }));
    const line = JSON.parse(await p.waitForLine(/"msg":"dashboard listening"/, 30_000));
    expect(line.port).toBeGreaterThan(1);
    p.proc.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  });
});
