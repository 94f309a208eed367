/**
 * The impersonation component and the marketplace's identities, against the real API server
 * (issue 26, item 9). The single-tenant API's RBAC (manifests/base/api) is installed twice into a
 * fresh namespace: plain, and with manifests/components/impersonation as docs/install.md adds it.
 * The component impersonates users and the listed groups only — never system:masters, service
 * accounts or extras; the permission probe needs no impersonation at all (LocalSubjectAccessReview);
 * a user whose token carries unlisted groups acts with the listed ones alone.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { client } from '../gateway/support.ts';
import { createNamespace } from '../support/kube.ts';
import {
  answersOf,
  every,
  installRbacOf,
  MANIFESTS,
  mustKubectl,
  scratchDir,
  startApi,
  stopAll,
  tokenKubeconfig,
} from './support.ts';

const scratch = scratchDir();
const AUD = 'https://berth.test/impersonation';
let ns: string;
let suffix: string;
/** The base API account alone, and the one with the component. */
let plain: Awaited<ReturnType<typeof tokenKubeconfig>>;
let impersonator: Awaited<ReturnType<typeof tokenKubeconfig>>;
let idp: OidcFixture;

beforeAll(async () => {
  ns = await createNamespace('berth-imp');
  suffix = `-${ns.slice(-6)}`;
  await installRbacOf(scratch.dir, 'base/api', ns, suffix);
  await installRbacOf(scratch.dir, 'base/api', ns, `${suffix}-imp`, ['impersonation']);
  // The editor Role of rule 8, bound to one user by name and to a listed group.
  const editor = join(MANIFESTS, 'overlays', 'tenant', 'marketplace-editor.yaml');
  await mustKubectl(['apply', '-n', ns, '-f', editor]);
  const bind = (name: string, subject: string) =>
    mustKubectl(['create', 'rolebinding', name, '-n', ns, '--role=berth-marketplace-editor', subject]);
  await bind('ed-user', '--user=oidc:ed-user');
  await bind('ed-group', '--group=berth-marketplace-editors');
  [plain, impersonator, idp] = await Promise.all([
    tokenKubeconfig(`berth-api${suffix}`, ns),
    tokenKubeconfig(`berth-api${suffix}-imp`, ns),
    startOidcProvider(),
  ]);
}, 300_000);

afterAll(async () => {
  await stopAll();
  await idp?.close();
  scratch.remove();
});

describe('the impersonation component', () => {
  it('impersonates users and the listed groups only: never system:masters, service accounts or extras', async () => {
    const allowed = [
      'impersonate users',
      'impersonate users/oidc:someone',
      'impersonate groups/berth-marketplace-editors',
      'impersonate groups/berth-marketplace-viewers',
    ];
    const denied = [
      'impersonate groups',
      'impersonate groups/system:masters',
      'impersonate groups/system:authenticated',
      'impersonate groups/unlisted',
      'impersonate serviceaccounts',
      `impersonate serviceaccounts/berth-api${suffix} -n ${ns}`,
      'impersonate userextras.authentication.k8s.io',
      'impersonate uids.authentication.k8s.io',
    ];
    expect(await answersOf(impersonator.kc, allowed)).toEqual(every(allowed, true));
    expect(await answersOf(impersonator.kc, denied)).toEqual(every(denied, false));
    // Without the component the API impersonates no one.
    const none = ['impersonate users', 'impersonate groups/berth-marketplace-editors'];
    expect(await answersOf(plain.kc, none)).toEqual(every(none, false));
  });
});

describe('the marketplace for users', () => {
  const env = () => ({
    OIDC_ISSUER_URL: idp.issuer,
    OIDC_APPLICATION_ID: AUD,
    OIDC_USERNAME_PREFIX: 'oidc:',
  });
  const as = (url: string, jwt: string) => client(url, { authorization: `Bearer ${jwt}` });
  const token = (claims: Record<string, unknown>) =>
    idp.signWithProviderKey({ aud: AUD, ...claims }, Math.floor(Date.now() / 1000) + 600);
  const sources = () => `/api/v1/namespaces/${ns}/marketplace-sources`;

  it('answers the permissions probe without any right to impersonate', async () => {
    const sso = await startApi(plain.path, ns, 'sso', env());
    const editor = as(sso.url, await token({ sub: 'ed-user' }));
    const nobody = as(sso.url, await token({ sub: 'nobody' }));
    expect((await editor.get(`${sources()}/permissions`)).body).toEqual({ canEdit: true });
    expect((await nobody.get(`${sources()}/permissions`)).body).toEqual({ canEdit: false });
    // Reads and writes still run as the user, so without the component they are refused.
    const read = await editor.get(sources());
    expect(read.status, read.text).toBe(403);
    expect(read.text).toMatch(/impersonate/);
  });

  it('acts as the user with the listed groups only, dropping the others, system:masters included', async () => {
    const sso = await startApi(impersonator.path, ns, 'sso', env());
    const groups = ['unlisted', 'berth-marketplace-editors', 'system:masters'];
    const groupEditor = as(sso.url, await token({ sub: 'grp-user', groups }));
    expect((await groupEditor.get(`${sources()}/permissions`)).body).toEqual({ canEdit: true });
    const made = await groupEditor.post(sources(), { name: 'by-group', url: 'https://hub.example/g' });
    expect(made.status, made.text).toBe(201);
    expect((await groupEditor.del(`${sources()}/by-group`)).status).toBe(204);
    // Only the unlisted group: the user alone has no rights, and nothing is granted through it.
    const unlisted = as(sso.url, await token({ sub: 'other-user', groups: ['unlisted'] }));
    expect((await unlisted.get(`${sources()}/permissions`)).body).toEqual({ canEdit: false });
    const refused = await unlisted.post(sources(), { name: 'x', url: 'https://hub.example/x' });
    expect(refused.status, refused.text).toBe(403);
    expect(sso.proc.output()).not.toMatch(/cannot impersonate/i);
  });
});
