import { Kinds, type Query } from '../../api/index.ts';
import type { QueryOutcome } from '../../engine/contract.ts';
import { type Client, patchStatus } from '../../kube/client/index.ts';
import type { Logger } from '../../log/index.ts';
import { queueStatusWrite, RUNNING_STATUS_DELAY_MS, type Run } from '../runs/index.ts';
import { runningStatus } from './status.ts';

export type QueryRun = Run<QueryOutcome>;

/**
 * The status a run writes while it runs, deferred: `running` (with its conversation id when known)
 * after RUNNING_STATUS_DELAY_MS, and the
 * conversation id with it (or on its own once `running` was written). Nothing is written for a
 * run that ended first.
 */
export interface RunningStatusOptions {
  client: Client;
  query: Query;
  run: QueryRun;
  /** False once the run ended or is no longer this process's (nothing is written then). */
  stillRunning: () => boolean;
  log: Logger;
}

export class RunningStatus {
  readonly #o: RunningStatusOptions;
  readonly #timer: NodeJS.Timeout;
  #written = false;
  #conversationId: string | undefined;

  constructor(opts: RunningStatusOptions) {
    this.#o = opts;
    this.#timer = setTimeout(() => this.#write(), RUNNING_STATUS_DELAY_MS);
  }

  conversation(conversationId: string): void {
    this.#conversationId = conversationId;
    if (this.#written) this.#patch({ conversationId, a2a: { contextId: conversationId } });
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  #write(): void {
    if (!this.#o.stillRunning()) return;
    this.#written = true;
    const id = this.#conversationId;
    this.#patch({
      ...runningStatus(this.#o.query, new Date(this.#o.run.startedAt)),
      ...(id ? { conversationId: id, a2a: { contextId: id } } : {}),
    });
  }

  #patch(status: Record<string, unknown>): void {
    if (!this.#o.stillRunning()) return;
    const { client, query, run, log } = this.#o;
    queueStatusWrite(run, () => patchStatus(client, Kinds.Query, query, status), log);
  }
}
