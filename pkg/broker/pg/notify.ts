import pg from 'pg';
import type { Logger } from '../../log/index.ts';

/** What a domain's feed reader wants from the notification connection. */
export interface ChannelHandlers {
  /** A NOTIFY on the channel; the payload is a sequence number (a hint, never the data). */
  notify(payload: string): void;
  /** The connection is (re)established and LISTENing: notifications may have been lost, catch up. */
  connected(): void;
}

export interface NotifierOptions {
  clientConfig: pg.ClientConfig;
  logger: Logger;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** A query on the idle connection this often, so a silently dead socket is noticed. */
  pingMs?: number;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The process's ONE LISTEN connection (a dedicated pg.Client, never a pooled one: a pooled
 * connection would be handed to other queries and its LISTENs reset). Notifications are lost while
 * it is down, so after every (re)connect it re-LISTENs every channel and tells each subscriber to
 * catch up by sequence. Reconnects with exponential backoff and jitter, forever, until closed.
 */
export class PgNotifier {
  readonly #opts: Required<Omit<NotifierOptions, 'clientConfig' | 'logger'>> & NotifierOptions;
  readonly #channels = new Map<string, Set<ChannelHandlers>>();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #backoff: number;
  #closed = false;
  #ping: NodeJS.Timeout | undefined;
  #downSince: number | undefined;

  constructor(opts: NotifierOptions) {
    this.#opts = {
      ...opts,
      minBackoffMs: opts.minBackoffMs ?? 100,
      maxBackoffMs: opts.maxBackoffMs ?? 5000,
      pingMs: opts.pingMs ?? 30_000,
    };
    this.#backoff = this.#opts.minBackoffMs;
  }

  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** The server process id of the LISTEN connection (tests terminate it to prove recovery). */
  get backendPid(): number | undefined {
    return (this.#client as unknown as { processID?: number } | undefined)?.processID;
  }

  /** Starts connecting in the background; resolves once the first attempt finished (either way). */
  start(): Promise<void> {
    this.#ping ??= setInterval(() => this.#checkAlive(), this.#opts.pingMs);
    this.#ping.unref();
    return this.#connect();
  }

  subscribe(channel: string, handlers: ChannelHandlers): () => void {
    if (!CHANNEL.test(channel)) throw new Error(`invalid channel name ${JSON.stringify(channel)}`);
    let set = this.#channels.get(channel);
    if (!set) {
      set = new Set();
      this.#channels.set(channel, set);
      const client = this.#client;
      if (client)
        client.query(`LISTEN ${channel}`).then(
          () => handlers.connected(),
          (err: unknown) => this.#lost(client, err),
        );
    } else if (this.#client) handlers.connected();
    set.add(handlers);
    return () => set.delete(handlers);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#ping);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  #connect(): Promise<void> {
    this.#connecting ??= this.#attempt().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #attempt(): Promise<void> {
    if (this.#closed || this.#client) return;
    const client = new pg.Client({ ...this.#opts.clientConfig, application_name: 'berth-broker-listen' });
    // Both fire when the server goes away; an unhandled 'error' would crash the process.
    client.on('error', (err) => this.#lost(client, err));
    client.on('end', () => this.#lost(client));
    client.on('notification', (n) => {
      for (const h of this.#channels.get(n.channel) ?? []) h.notify(n.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.#channels.keys()) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      client.removeAllListeners('end');
      client.on('error', () => {});
      await client.end().catch(() => {});
      this.#retry(err);
      return;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#backoff = this.#opts.minBackoffMs;
    if (this.#downSince !== undefined)
      this.#opts.logger.info({ downMs: Date.now() - this.#downSince }, 'LISTEN connection restored');
    this.#downSince = undefined;
    for (const set of this.#channels.values()) for (const h of set) h.connected();
  }

  #lost(client: pg.Client, err?: unknown): void {
    if (client !== this.#client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    if (this.#closed) return;
    this.#downSince ??= Date.now();
    this.#opts.logger.warn({ err: describe(err) }, 'LISTEN connection lost; reconnecting');
    this.#retry();
  }

  #retry(err?: unknown): void {
    if (this.#closed) return;
    if (err !== undefined) {
      const first = this.#downSince === undefined;
      this.#downSince ??= Date.now();
      // One warning when the outage starts, then quiet retries (debug) until it is over.
      this.#opts.logger[first ? 'warn' : 'debug'](
        { err: describe(err), retryInMs: this.#backoff },
        'LISTEN connection failed',
      );
    }
    const delay = this.#backoff * (0.5 + Math.random() / 2);
    this.#backoff = Math.min(this.#backoff * 2, this.#opts.maxBackoffMs);
    setTimeout(() => void this.#connect(), delay).unref();
  }

  #checkAlive(): void {
    const client = this.#client;
    if (!client) return;
    client.query('SELECT 1').catch((err: unknown) => this.#lost(client, err));
  }
}

/** Error fields worth a log line (message and code; never the connection config). */
export function describe(err: unknown): { message: string; code?: string } | undefined {
  if (err === undefined) return undefined;
  if (!(err instanceof Error)) return { message: String(err) };
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? { message: err.message, code } : { message: err.message };
}
