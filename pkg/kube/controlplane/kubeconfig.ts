import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

export const LOCAL_USERS = ['admin', 'gateway', 'controller'] as const;
export type LocalUser = (typeof LOCAL_USERS)[number];

/** Kubeconfig with one cluster and a token user (and a context) per local identity; admin is current. */
export async function writeKubeconfig(
  path: string,
  server: string,
  caCertPath: string,
  tokens: Record<LocalUser, string>,
): Promise<void> {
  const ca = readFileSync(caCertPath).toString('base64');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'berth-local', cluster: { server, 'certificate-authority-data': ca } }],
    users: LOCAL_USERS.map((u) => ({ name: u, user: { token: tokens[u] } })),
    contexts: LOCAL_USERS.map((u) => ({
      name: u === 'admin' ? 'berth-local' : `berth-local-${u}`,
      context: { cluster: 'berth-local', user: u, namespace: 'default' },
    })),
    'current-context': 'berth-local',
  };
  await writeFile(path, stringify(doc), { mode: 0o600 });
}
