import { readFile } from 'node:fs/promises';
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import type { ReconcileResult } from '../../kube/controller.ts';
import { Discovery } from '../../kube/discovery.ts';
import { Informer } from '../../kube/informer.ts';
import { SupervisedInformer, type SupervisorOptions } from '../../kube/supervisor.ts';
import type { Logger } from '../../log/index.ts';
import { applySeed, parseSeed } from './seed.ts';

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
export class MarketplaceSeeder {
  private readonly kc: KubeConfig;
  private readonly source: SeedSource;
  private readonly logger: Logger;
  private readonly discovery: Discovery;
  private readonly watcher: SupervisedInformer<V1ConfigMap> | undefined;
  private lastReported = '';

  constructor(kc: KubeConfig, source: SeedSource, logger: Logger, supervisor?: SupervisorOptions) {
    this.kc = kc;
    this.source = source;
    this.logger = logger;
    this.discovery = new Discovery(kc);
    const cm = source.configMap;
    if (cm) {
      const informer = new Informer<V1ConfigMap>({
        kc,
        path: `/api/v1/namespaces/${encodeURIComponent(cm.namespace)}/configmaps`,
        fieldSelector: `metadata.name=${cm.name}`,
      });
      this.watcher = new SupervisedInformer('marketplace-seed', informer, { logger, ...supervisor });
    }
  }

  /** Calls `onChange` whenever the seed ConfigMap changes; starts watching it. */
  watch(onChange: () => void): void {
    this.watcher?.informer.addHandlers({ onAdd: onChange, onUpdate: onChange, onDelete: onChange });
    this.watcher?.start();
  }

  async waitForSync(): Promise<void> {
    await this.watcher?.informer.waitForSync();
  }

  async stop(): Promise<void> {
    await this.watcher?.stop();
  }

  private async readText(): Promise<{ text: string; origin: string } | undefined> {
    const { file, configMap } = this.source;
    if (file) return { text: await readFile(file, 'utf8'), origin: file };
    if (configMap && this.watcher) {
      const cm = this.watcher.informer.get(configMap.namespace, configMap.name);
      const key = configMap.key ?? 'marketplaceSources';
      const text = cm?.data?.[key];
      return text === undefined
        ? undefined
        : { text, origin: `ConfigMap ${configMap.namespace}/${configMap.name} key ${key}` };
    }
    return undefined;
  }

  async reconcile(): Promise<ReconcileResult | undefined> {
    const input = await this.readText();
    if (!input) {
      this.logger.info('no marketplace seed list found; nothing to seed');
      return undefined;
    }
    const { entries, errors } = parseSeed(input.text, input.origin);
    const report = JSON.stringify(errors);
    if (errors.length && report !== this.lastReported) {
      this.logger.error({ errors, origin: input.origin }, 'marketplace seed entries rejected');
    }
    this.lastReported = report;
    const results = await applySeed(this.kc, entries, this.source.defaultNamespace, this.discovery);
    this.logger.info(
      {
        origin: input.origin,
        applied: results.filter((r) => r.result === 'applied').map((r) => `${r.namespace}/${r.name}`),
        leftAlone: results.filter((r) => r.result === 'skipped').map((r) => `${r.namespace}/${r.name}`),
        rejected: errors.length,
      },
      entries.length ? 'marketplace sources seeded' : 'marketplace seed list is empty; nothing to seed',
    );
    return undefined;
  }
}
