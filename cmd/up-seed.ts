import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, berthScheme, DEMO_MODEL, Kinds } from '../pkg/api/index.ts';
import { createClient } from '../pkg/kube/client/index.ts';
import type { Logger } from '../pkg/log/index.ts';

/**
 * What a first run needs in the local namespace, applied by `berth up` with its own field manager
 * and without force, so an object the user changed (a Model switched to a real provider, a Memory
 * pointed elsewhere) is left as it is:
 * - Memory `default`: conversation memory from the local broker for every query naming none;
 * - Model `demo`: the built-in demo model, so the samples answer with no key and no network.
 */
export async function seedLocalObjects(kc: KubeConfig, namespace: string, brokerUrl: string, log: Logger) {
  const client = createClient({ kc, scheme: berthScheme(), userAgent: 'berth-up' });
  const opts = { fieldManager: 'berth-up', force: false };
  const meta = (name: string) => ({ name, namespace });
  const left = (what: string) => (err: Error) => log.warn({ err: err.message }, `${what} left as it is`);
  await client
    .apply(
      Kinds.Memory,
      {
        apiVersion: API_VERSION,
        kind: 'Memory',
        metadata: meta('default'),
        spec: { address: { value: brokerUrl } },
      },
      opts,
    )
    .catch(left('Memory "default"'));
  await client
    .apply(
      Kinds.Model,
      { apiVersion: API_VERSION, kind: 'Model', metadata: meta(DEMO_MODEL.name), spec: DEMO_MODEL.spec },
      opts,
    )
    .catch(left(`Model "${DEMO_MODEL.name}"`));
}
