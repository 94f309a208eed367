import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { migrate, type PgBackend } from '../../pkg/broker/pg/index.ts';
import { freePort } from '../../pkg/kube/controlplane/ports.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';
import { databaseUrl } from '../support/services.ts';

/** The test PostgreSQL (DATABASE_URL or the local service), or a failure naming what is missing. */
export function baseDatabaseUrl(): string {
  return databaseUrl(inject('services'));
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Per-test-file databases: one template migrated once, then `CREATE DATABASE x TEMPLATE tpl` per
 * store or broker (~20 ms, already migrated). Names are unique per process; `dropAll` removes them
 * (WITH (FORCE) ends connections a failed test left open).
 */
export class TestDatabases {
  readonly #base: string;
  readonly #prefix = `berth_t${process.pid}_${randomBytes(3).toString('hex')}`;
  readonly #created: string[] = [];
  #template: Promise<string> | undefined;
  #n = 0;

  constructor(base = baseDatabaseUrl()) {
    this.#base = base;
  }

  /** A fresh, migrated database's URL. */
  async fresh(): Promise<string> {
    const tpl = await this.template();
    const name = `${this.#prefix}_${++this.#n}`;
    await this.#admin(`CREATE DATABASE ${name} TEMPLATE ${tpl}`);
    this.#created.push(name);
    return withDatabase(this.#base, name);
  }

  /** An empty database (nothing migrated). */
  async empty(): Promise<string> {
    const name = `${this.#prefix}_${++this.#n}`;
    await this.#admin(`CREATE DATABASE ${name}`);
    this.#created.push(name);
    return withDatabase(this.#base, name);
  }

  template(): Promise<string> {
    this.#template ??= (async () => {
      const name = `${this.#prefix}_tpl`;
      await this.#admin(`CREATE DATABASE ${name}`);
      this.#created.push(name);
      const pool = new pg.Pool({ connectionString: withDatabase(this.#base, name), max: 1 });
      try {
        await migrate(pool);
      } finally {
        await pool.end();
      }
      return name;
    })();
    return this.#template;
  }

  /**
   * Drops the databases. A pool's `end()` resolves once it has asked its connections to close, not
   * once they are closed: a FORCE drop in that moment hits connections already ending, whose client
   * then throws the server's "terminating connection" with nobody listening. So the drop first waits
   * (up to 2 s) for the database's connections to go away; FORCE is for those a failed test left.
   */
  async dropAll(): Promise<void> {
    for (const name of this.#created.splice(0).reverse())
      await this.#admin(async (c) => {
        const until = Date.now() + 2000;
        while (Date.now() < until) {
          const r = await c.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
            [name],
          );
          if (!r.rows[0]?.n) break;
          await new Promise((ok) => setTimeout(ok, 50));
        }
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
  }

  async #admin(work: string | ((c: pg.Client) => Promise<void>)): Promise<void> {
    const c = new pg.Client({ connectionString: this.#base });
    await c.connect();
    try {
      if (typeof work === 'string') await c.query(work);
      else await work(c);
    } finally {
      await c.end();
    }
  }
}

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Resolves once `check` holds (polled every 20 ms); fails after `ms` naming `what`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition') {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Ends a backend's LISTEN connection from the server side, as a network drop would. */
export async function killListen(url: string, backend: PgBackend): Promise<void> {
  const pid = backend.notifier.backendPid;
  if (!pid) throw new Error('the LISTEN connection is not up');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
    if (r.rows[0]?.ok !== true) throw new Error(`could not terminate the LISTEN connection ${pid}`);
  } finally {
    await c.end();
  }
}

/**
 * A PostgreSQL server of the test's own (initdb + pg_ctl on a free port), so outage tests stop and
 * start it without touching the shared service. initdb refuses root: as root it runs as `postgres`.
 */
export class OwnPostgres {
  readonly port: number;
  readonly dir: string;

  private constructor(port: number, dir: string) {
    this.port = port;
    this.dir = dir;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(): Promise<OwnPostgres> {
    const { mkdtempSync, chownSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'berth-own-pg-'));
    if (process.getuid?.() === 0) {
      const { execFileSync } = await import('node:child_process');
      const ids = execFileSync('id', ['-u', 'postgres']).toString().trim();
      const gid = execFileSync('id', ['-g', 'postgres']).toString().trim();
      chownSync(dir, Number(ids), Number(gid));
    }
    const own = new OwnPostgres(await freePort(), dir);
    await own.#run(`${PG_BIN}/initdb -D ${dir}/data -U postgres -A trust --no-sync`);
    await own.start();
    return own;
  }

  start(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    return this.#run(`${PG_BIN}/pg_ctl -D ${this.dir}/data -l ${this.dir}/log -o "${opts}" -w start`);
  }

  /** Stops it at once (`-m immediate`: like a crash; committed work is in the WAL). */
  stop(mode: 'fast' | 'immediate' = 'immediate'): Promise<void> {
    return this.#run(`${PG_BIN}/pg_ctl -D ${this.dir}/data -m ${mode} -w stop`);
  }

  async destroy(): Promise<void> {
    await this.stop('immediate').catch(() => {});
    const { rmSync } = await import('node:fs');
    rmSync(this.dir, { recursive: true, force: true });
  }

  async #run(cmd: string): Promise<void> {
    const { execFile } = await import('node:child_process');
    const asPostgres = process.getuid?.() === 0;
    const [file, args] = asPostgres ? ['su', ['postgres', '-c', cmd]] : ['sh', ['-c', cmd]];
    await new Promise<void>((resolve, reject) =>
      execFile(file, args as string[], { timeout: 60_000 }, (err, _out, stderr) =>
        err ? reject(new Error(`${cmd}: ${stderr || err.message}`)) : resolve(),
      ),
    );
  }
}

/** `berth broker` as its own process with its messages on `databaseUrl`, once it listens. */
export async function spawnPgBroker(databaseUrl: string): Promise<{ p: Spawned; port: number; url: string }> {
  const p = spawnBerth(['broker', '--port', '0'], {
    ...process.env,
    LOG_LEVEL: 'info',
    MESSAGE_BACKEND: 'postgres',
    DATABASE_URL: databaseUrl,
  });
  const line = await p.waitForLine(/"msg":"broker listening"/, 30_000);
  const { port } = JSON.parse(line) as { port: number };
  return { p, port, url: `http://127.0.0.1:${port}` };
}
