import { readFile } from 'node:fs/promises';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { InformerCache } from '../../kube/cache.ts';
import type { Client } from '../../kube/client/index.ts';
import {
  Controller,
  type ControllerOptions,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../../kube/controller.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import type { Manager } from '../../kube/manager.ts';
import { applySeed, parseSeed } from './seed.ts';

const ConfigMapRef = CoreKinds.ConfigMap as KindRef<V1ConfigMap>;

/** Seeding is one job, not one per object: every trigger maps to this request. */
const SEED_REQUEST = { namespace: '', name: 'marketplace-seed' };

export interface SeedSource {
  /** A YAML/JSON file with the list (e.g. a mounted ConfigMap); re-read on every seeding. */
  file?: string;
  /** A ConfigMap holding the list under `key` (default `marketplaceSources`); watched for changes. */
  configMap?: { namespace: string; name: string; key?: string };
  /** Namespace of entries without one: the controller's namespace. */
  defaultNamespace: string;
}

/**
 * Seeds marketplace sources at the start of each leadership term and whenever the seed ConfigMap
 * changes. It does not react to the `marketplace-sources` ConfigMap itself: a source a user
 * deleted through the API must stay deleted until the seed list changes.
 */
export class MarketplaceSeeder implements Reconciler {
  private readonly client: Client;
  private readonly source: SeedSource;
  /** Holds the seed ConfigMap when the list comes from one. */
  private readonly seedCache: InformerCache | undefined;
  private lastReported = '';

  constructor(client: Client, source: SeedSource, seedCache?: InformerCache) {
    this.client = client;
    this.source = source;
    this.seedCache = seedCache;
  }

  private async readText(): Promise<{ text: string; origin: string } | undefined> {
    const { file, configMap } = this.source;
    if (file) return { text: await readFile(file, 'utf8'), origin: file };
    if (!configMap || !this.seedCache) return undefined;
    const cm = this.seedCache.get(ConfigMapRef, configMap.namespace, configMap.name);
    const key = configMap.key ?? 'marketplaceSources';
    const text = cm?.data?.[key];
    if (text === undefined) return undefined;
    return { text, origin: `ConfigMap ${configMap.namespace}/${configMap.name} key ${key}` };
  }

  async reconcile(_req: unknown, { logger }: ReconcileContext): Promise<ReconcileResult | undefined> {
    const input = await this.readText();
    if (!input) {
      logger.info('no marketplace seed list found; nothing to seed');
      return undefined;
    }
    const { entries, errors } = parseSeed(input.text, input.origin);
    // The same rejected entries are reported once, not at every term.
    const report = JSON.stringify(errors);
    if (errors.length && report !== this.lastReported) {
      logger.error({ errors, origin: input.origin }, 'marketplace seed entries rejected');
    }
    this.lastReported = report;
    const results = await applySeed(this.client, entries, this.source.defaultNamespace);
    const names = (result: string) =>
      results.filter((r) => r.result === result).map((r) => `${r.namespace}/${r.name}`);
    logger.info(
      {
        origin: input.origin,
        applied: names('applied'),
        leftAlone: names('skipped'),
        rejected: errors.length,
      },
      entries.length ? 'marketplace sources seeded' : 'marketplace seed list is empty; nothing to seed',
    );
    return undefined;
  }
}

/**
 * The seeding controller. The seed ConfigMap gets a cache of its own: the shared cache holds only
 * the `marketplace-sources` ConfigMaps (one selection per kind).
 */
export function addSeeder(
  mgr: Manager,
  source: SeedSource,
  opts: Omit<ControllerOptions, 'name' | 'reconciler'>,
): Controller {
  const cm = source.configMap;
  const seedCache = cm
    ? mgr.addCache(cm.namespace, [{ ref: ConfigMapRef, fieldSelector: `metadata.name=${cm.name}` }])
    : undefined;
  const reconciler = new MarketplaceSeeder(mgr.client, source, seedCache);
  const ctl = new Controller({ ...opts, name: 'marketplace-seed', workers: 1, reconciler });
  ctl.startWith(() => [SEED_REQUEST]);
  if (seedCache) ctl.watches(seedCache, ConfigMapRef, () => [SEED_REQUEST]);
  return mgr.add(ctl);
}
