/**
 * The marketplace's test world, all real: a tenant installed from manifests/ with the optional
 * impersonation component (the API runs with that ServiceAccount's token, nothing more), two users
 * bound to the manifests' Roles (an editor by user name; a reader through a group, without Secret
 * access), a real OpenID provider signing their tokens, and an HTTPS manifest server with its own CA.
 */
import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { join, relative } from 'node:path';
import { SHARED_CACHE } from '../../pkg/api/index.ts';
import { systemResolver } from '../../pkg/gateway/marketplace/guarded-fetch.ts';
import type { MarketplaceOptions } from '../../pkg/gateway/marketplace/index.ts';
import { type RunningGateway, startGatewayServer } from '../../pkg/gateway/server.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import { freePort } from '../../pkg/kube/controlplane/ports.ts';
import { captureLogs } from '../auth/support.ts';
import { type ManifestServer, startManifestServer } from '../fixtures/marketplace-server.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc/provider.ts';
import {
  kustomization,
  MANIFESTS,
  mustKubectl,
  removeTokenKubeconfigs,
  scratchDir,
  tokenKubeconfig,
} from '../install/support.ts';
import { createNamespace } from '../support/kube.ts';
import { client } from './support.ts';

export const AUD = 'https://berth.test/marketplace';

/** Names the test resolver answers: what DNS could say, without a DNS server. */
const FAKE_DNS: Record<string, LookupAddress[]> = {
  'loopback.test': [{ address: '127.0.0.1', family: 4 }],
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  // One public and one private answer: one refused address refuses the name.
  'rebind.test': [
    { address: '93.184.215.14', family: 4 },
    { address: '10.1.2.3', family: 4 },
  ],
};

export interface World {
  ns: string;
  server: ManifestServer;
  idp: OidcFixture;
  logs: ReturnType<typeof captureLogs>;
  /** hybrid mode, OIDC_USERNAME_PREFIX=oidc:, OIDC_GROUPS_CLAIM=roles; 2 s per source. */
  api: RunningGateway;
  /** open mode (the service account); 1.5 s for all sources together. */
  open: RunningGateway;
  users: { editor: string; reader: string };
  /** A port where nothing listens, yet allowed by MARKETPLACE_ALLOWED_HOSTS. */
  closedPort: number;
  token(claims: Record<string, unknown>): Promise<string>;
  as(token: string, base?: string): ReturnType<typeof client>;
  /** Every credential handed out in the file, for the leak checks. */
  credentials: string[];
  close(): Promise<void>;
}

/** The Role names the tenant install created (kustomize's nameSuffix makes them per tenant). */
export const roleOf = (ns: string, role: 'editor' | 'viewer') => `berth-marketplace-${role}-${ns}`;

export async function startWorld(prefix: string): Promise<World> {
  const scratch = scratchDir();
  const ns = await createNamespace(prefix);
  const suffix = `-${ns}`;
  // The documented install with impersonation: the tenant overlay, the component, a nameSuffix.
  const component = relative(join(scratch.dir, ns), join(MANIFESTS, 'components', 'impersonation'));
  // The component impersonates listed groups only: the readers' group is listed, as an operator
  // lists the groups their tenants' Roles are bound to (the editor's other group is not).
  const groups = JSON.stringify([`mp-readers-${ns}`]);
  const listed = `patches:\n  - target: { kind: ClusterRole, name: berth-api-impersonator }\n    patch: '[{"op": "replace", "path": "/rules/1/resourceNames", "value": ${groups}}]'\n`;
  const extra = `namespace: ${ns}\nnameSuffix: "${suffix}"\ncomponents: [${component}]\n${listed}`;
  const dir = kustomization(scratch.dir, ns, 'overlays/tenant', extra);
  await mustKubectl(['apply', '-k', dir]);
  scratch.remove();

  const users = { editor: `oidc:mp-editor-${ns}`, reader: `oidc:mp-reader-${ns}` };
  const readers = `mp-readers-${ns}`;
  const binding = (name: string, role: string, subject: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
    subjects: [subject],
  });
  const bindings = [
    binding('editor-edits', roleOf(ns, 'editor'), `User:${users.editor}`),
    binding('editor-views', roleOf(ns, 'viewer'), `User:${users.editor}`),
    binding('readers-view', roleOf(ns, 'viewer'), `Group:${readers}`),
  ].map((b) => ({
    ...b,
    subjects: b.subjects.map((s) => {
      const [kind, name] = s.split(/:(.*)/s) as [string, string];
      return { apiGroup: 'rbac.authorization.k8s.io', kind, name };
    }),
  }));
  await mustKubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: bindings }),
  );

  const credentials = [`mp-bearer-${randomUUID()}`, `mp-basic-${randomUUID()}`];
  const [server, idp, token, closedPort] = await Promise.all([
    startManifestServer({ bearer: credentials[0] as string, basic: credentials[1] as string }),
    startOidcProvider(),
    tokenKubeconfig(`berth-api${suffix}`, ns),
    freePort(),
  ]);
  const logs = captureLogs();
  const cache = InformerCache.of({ kc: token.kc, namespace: ns, logger: logs.logger }, SHARED_CACHE);
  cache.start();
  await cache.waitForSync(30_000);
  const resolve = async (host: string) => FAKE_DNS[host] ?? systemResolver(host);
  const env = {
    OIDC_ISSUER_URL: idp.issuer,
    OIDC_APPLICATION_ID: AUD,
    OIDC_USERNAME_PREFIX: 'oidc:',
    OIDC_GROUPS_CLAIM: 'roles',
    MARKETPLACE_ALLOWED_HOSTS: `127.0.0.1:${server.port},127.0.0.1:${closedPort}`,
  };
  const start = (authMode: string, marketplace: MarketplaceOptions) =>
    startGatewayServer({
      kc: token.kc,
      namespace: ns,
      confined: true,
      cache,
      logger: logs.logger,
      port: 0,
      host: '127.0.0.1',
      env: { ...env, AUTH_MODE: authMode },
      bcryptCost: 4,
      marketplace: { ca: [server.ca], resolve, ...marketplace },
    });
  const api = await start('hybrid', { fetchTimeoutMs: 2000, totalTimeoutMs: 20_000 });
  const open = await start('open', { fetchTimeoutMs: 20_000, totalTimeoutMs: 1500 });

  const world: World = {
    ns,
    server,
    idp,
    logs,
    api,
    open,
    users,
    closedPort,
    credentials,
    async token(claims) {
      const jwt = await idp.signWithProviderKey({ aud: AUD, ...claims }, Math.floor(Date.now() / 1000) + 600);
      return jwt;
    },
    as: (jwt, base = api.url) => client(base, { authorization: `Bearer ${jwt}` }),
    async close() {
      await Promise.all([api.close(), open.close()]);
      await Promise.all([cache.stop(), server.close(), idp.close()]);
      removeTokenKubeconfigs();
    },
  };
  return world;
}

/** The tokens of the two users (the reader's rights come from its `roles` group only). */
export async function userTokens(w: World) {
  const editorSub = w.users.editor.slice('oidc:'.length);
  const readerSub = w.users.reader.slice('oidc:'.length);
  return {
    editor: await w.token({ sub: editorSub, roles: ['mp-unrelated'] }),
    reader: await w.token({ sub: readerSub, roles: [`mp-readers-${w.ns}`] }),
  };
}
