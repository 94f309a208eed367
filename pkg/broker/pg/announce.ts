import type pg from 'pg';
import type { Logger } from '../../log/index.ts';

/**
 * Tells the other replicas that a domain has new rows, AFTER the write committed and outside its
 * transaction. A NOTIFY inside the write transaction would make PostgreSQL serialize every
 * notifying commit (it holds the notify queue lock through the commit's WAL flush), capping writes
 * at one fsync each. Announcements are coalesced per channel: one NOTIFY in flight, carrying the
 * highest sequence committed meanwhile — the payload is only a hint, readers catch up by sequence.
 * A lost announcement (crash, outage) costs latency, not data: feeds also poll.
 */
export class Announcer {
  readonly #pool: pg.Pool;
  readonly #logger: Logger;
  readonly #pending = new Map<string, number>();
  readonly #inFlight = new Set<string>();

  constructor(pool: pg.Pool, logger: Logger) {
    this.#pool = pool;
    this.#logger = logger;
  }

  announce(channel: string, seq: number): void {
    this.#pending.set(channel, Math.max(seq, this.#pending.get(channel) ?? 0));
    if (!this.#inFlight.has(channel)) void this.#send(channel);
  }

  async #send(channel: string): Promise<void> {
    this.#inFlight.add(channel);
    try {
      for (let seq = this.#pending.get(channel); seq !== undefined; seq = this.#pending.get(channel)) {
        this.#pending.delete(channel);
        try {
          await this.#pool.query('SELECT pg_notify($1, $2)', [channel, String(seq)]);
        } catch (err) {
          this.#logger.debug({ err, channel }, 'announcement lost; feeds catch up by polling');
        }
      }
    } finally {
      this.#inFlight.delete(channel);
    }
  }
}
