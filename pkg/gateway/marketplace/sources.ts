import { HttpError, httpError } from '../../http/index.ts';
import type { Client } from '../../kube/client/types.ts';
import type { Logger } from '../../log/index.ts';
import { type Acting, DELETE_SECRET, requireRights, WRITE_KEY, WRITE_SECRET } from './access.ts';
import { urlProblem } from './address.ts';
import { deleteCredential, writeCredential } from './credentials.ts';
import { FetchFailure } from './fetch-failure.ts';
import type { GuardedFetcher } from './guarded-fetch.ts';
import { type Merged, merge } from './merge.ts';
import { credentialNameProblem, credentialSecretName, nameProblem } from './names.ts';
import type { CreateSourceBody, PatchSourceBody, SourceView, StoredSource } from './schemas.ts';
import { type Credential, fetchManifest } from './source-fetch.ts';
import { applySource, createEmptyMap, decode, decodeAll, readMap, removeSource, withRetry } from './store.ts';

export interface SourceServiceOptions {
  /** The API's own identity: only to create the missing map (rule 8 gives editors no create). */
  own: Client;
  fetcher: GuardedFetcher;
  allowedHosts: ReadonlySet<string>;
  fetchTimeoutMs: number;
  logger: Logger;
}

export const view = (name: string, s: StoredSource): SourceView => ({
  name,
  url: s.url,
  displayName: s.displayName || name,
  ...(s.auth ? { auth: { scheme: s.auth.scheme, secretRef: s.auth.secretRef } } : {}),
});

const notFound = (namespace: string, name: string) =>
  httpError('not_found', `marketplace source ${namespace}/${name} not found`);

/**
 * Sources CRUD on the namespace's `marketplace-sources` ConfigMap, every call made as the acting
 * client (the user). Rules 1–3 of the spec are checked here; a credential is test-fetched before
 * anything is written and kept only in its Secret.
 */
export class SourceService {
  readonly #o: SourceServiceOptions;

  constructor(o: SourceServiceOptions) {
    this.#o = o;
  }

  async list({ client }: Acting, namespace: string): Promise<SourceView[]> {
    const out: SourceView[] = [];
    for (const d of decodeAll(await readMap(client, namespace))) {
      if ('source' in d) out.push(view(d.name, d.source));
      else
        this.#o.logger.warn({ namespace, source: d.name, problem: d.problem }, 'invalid marketplace source');
    }
    return out;
  }

  async get({ client }: Acting, namespace: string, name: string): Promise<SourceView> {
    const raw = (await readMap(client, namespace)).data[name];
    const d = raw === undefined ? undefined : decode(name, raw);
    if (!d || !('source' in d)) throw notFound(namespace, name);
    return view(name, d.source);
  }

  async create(acting: Acting, namespace: string, body: CreateSourceBody): Promise<SourceView> {
    const { name } = body;
    const bad = nameProblem(name) ?? (body.auth ? credentialNameProblem(name) : undefined);
    if (bad) throw httpError('invalid_name', bad);
    this.#checkUrl(body.url);
    const { client } = acting;
    const map = await readMap(client, namespace);
    const exists = () =>
      httpError('already_exists', `marketplace source ${namespace}/${name} already exists`);
    if (map.data[name] !== undefined) throw exists();
    await requireRights(acting, namespace, body.auth ? [...WRITE_KEY, ...WRITE_SECRET] : WRITE_KEY);
    const credential = body.auth ? { scheme: body.auth.scheme, value: body.auth.credential } : undefined;
    if (credential) await this.#testFetch(body.url, credential);
    if (!map.exists) await createEmptyMap(this.#o.own, namespace);
    const stored: StoredSource = {
      url: body.url,
      ...(body.displayName ? { displayName: body.displayName } : {}),
      ...(credential ? { auth: { scheme: credential.scheme, secretRef: credentialSecretName(name) } } : {}),
    };
    if (credential) await writeCredential(client, namespace, name, body.url, credential);
    try {
      await withRetry(async () => {
        const current = await readMap(client, namespace);
        if (current.data[name] !== undefined) throw exists();
        await applySource(client, namespace, name, stored, current.resourceVersion);
      });
    } catch (err) {
      // A source of that name created meanwhile keeps the Secret (it is now that source's).
      if (credential && !(err instanceof HttpError && err.status === 409))
        await deleteCredential(client, namespace, name).catch(() => undefined);
      throw err;
    }
    this.#o.logger.info(
      { namespace, source: name, by: acting.who, private: !!credential },
      'marketplace source created',
    );
    return view(name, stored);
  }

  async update(acting: Acting, namespace: string, name: string, body: PatchSourceBody): Promise<SourceView> {
    const { client } = acting;
    const current = (await readMap(client, namespace)).data[name];
    if (current === undefined) throw notFound(namespace, name);
    const first = this.#merge(name, current, body);
    await requireRights(acting, namespace, [
      ...WRITE_KEY,
      ...(first.credential ? WRITE_SECRET : []),
      ...(first.dropSecret ? DELETE_SECRET : []),
    ]);
    if (first.credential) {
      await this.#testFetch(first.next.url, first.credential);
      await writeCredential(client, namespace, name, first.next.url, first.credential);
    }
    let saved = first;
    await withRetry(async () => {
      const map = await readMap(client, namespace);
      const raw = map.data[name];
      if (raw === undefined) throw notFound(namespace, name);
      // Merged again on what is there now: a concurrent edit of this source is not lost.
      saved = raw === current ? first : this.#merge(name, raw, body);
      await applySource(client, namespace, name, saved.next, map.resourceVersion);
    });
    if (saved.dropSecret) await deleteCredential(client, namespace, name);
    this.#o.logger.info(
      { namespace, source: name, by: acting.who, private: !!saved.next.auth },
      'marketplace source updated',
    );
    return view(name, saved.next);
  }

  async remove(acting: Acting, namespace: string, name: string): Promise<void> {
    const { client } = acting;
    const raw = (await readMap(client, namespace)).data[name];
    if (raw === undefined) throw notFound(namespace, name);
    const d = decode(name, raw);
    // Only the Secret this API names for the source goes with it; a seeded source may point at a
    // Secret managed elsewhere (a chart's), which is not ours to delete.
    const ours = 'source' in d && d.source.auth?.secretRef === credentialSecretName(name);
    await requireRights(acting, namespace, [...WRITE_KEY, ...(ours ? DELETE_SECRET : [])]);
    await removeSource(client, namespace, name);
    if (ours) await deleteCredential(client, namespace, name);
    this.#o.logger.info({ namespace, source: name, by: acting.who }, 'marketplace source deleted');
  }

  #merge(name: string, raw: string, body: PatchSourceBody): Merged {
    const merged = merge(name, decode(name, raw), body);
    this.#checkUrl(merged.next.url);
    return merged;
  }

  #checkUrl(url: string): void {
    const problem = urlProblem(url, this.#o.allowedHosts);
    if (problem) throw httpError(problem.code, problem.message, { field: 'url' });
  }

  /** Rule 2: the credential must open the manifest before it is saved. */
  async #testFetch(url: string, credential: Credential): Promise<void> {
    const signal = AbortSignal.timeout(this.#o.fetchTimeoutMs);
    try {
      await fetchManifest(this.#o.fetcher, url, credential, signal);
    } catch (err) {
      const failure =
        err instanceof FetchFailure
          ? err
          : signal.aborted
            ? new FetchFailure('fetch_timeout', 'the source did not answer in time')
            : undefined;
      if (!failure) throw err;
      if (failure.code === 'auth_error')
        throw httpError('credential_rejected', `the credential was not accepted: ${failure.message}`);
      throw httpError(
        'source_unreachable',
        `the manifest could not be fetched with the credential: ${failure.message}`,
        {
          sourceError: { code: failure.code, message: failure.message },
        },
      );
    }
  }
}
