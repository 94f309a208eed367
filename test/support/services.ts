import { Socket } from 'node:net';

/**
 * Postgres and Redis for tests: DATABASE_URL / REDIS_URL, else the local services at 127.0.0.1,
 * else testcontainers when a Docker engine exists. Anything else is an error that names what is
 * missing; tests that need the service fail with it (never a silent skip).
 */
export interface ServiceUrls {
  databaseUrl?: string;
  redisUrl?: string;
  databaseError?: string;
  redisError?: string;
}

function tcpAnswers(url: string, fallbackPort: number, timeoutMs = 1500): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('error', () => done(false));
    s.connect(Number(u.port || fallbackPort), u.hostname || '127.0.0.1', () => done(true));
  });
}

async function viaContainer(
  image: string,
  port: number,
  scheme: string,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const { GenericContainer } = await import('testcontainers');
  const env: Record<string, string> = image.startsWith('postgres')
    ? { POSTGRES_HOST_AUTH_METHOD: 'trust' }
    : {};
  const c = await new GenericContainer(image).withEnvironment(env).withExposedPorts(port).start();
  const auth = scheme === 'postgres' ? 'postgres@' : '';
  return {
    url: `${scheme}://${auth}${c.getHost()}:${c.getMappedPort(port)}${scheme === 'postgres' ? '/postgres' : ''}`,
    stop: async () => void (await c.stop()),
  };
}

export async function resolveServices(): Promise<{ urls: ServiceUrls; stop: () => Promise<void> }> {
  const stops: Array<() => Promise<void>> = [];
  const urls: ServiceUrls = {};
  const specs = [
    {
      key: 'database',
      env: 'DATABASE_URL',
      local: 'postgres://postgres@127.0.0.1:5432/postgres',
      port: 5432,
      image: 'postgres:17-alpine',
      scheme: 'postgres',
    },
    {
      key: 'redis',
      env: 'REDIS_URL',
      local: 'redis://127.0.0.1:6379',
      port: 6379,
      image: 'redis:7-alpine',
      scheme: 'redis',
    },
  ] as const;
  for (const s of specs) {
    const candidate = process.env[s.env] || s.local;
    if (await tcpAnswers(candidate, s.port)) {
      urls[`${s.key}Url`] = candidate;
      continue;
    }
    try {
      const c = await viaContainer(s.image, s.port, s.scheme);
      stops.push(c.stop);
      urls[`${s.key}Url`] = c.url;
    } catch (err) {
      urls[`${s.key}Error`] =
        `${s.env} (${candidate}) does not answer and no container runtime is available (${err instanceof Error ? err.message : String(err)}). Start the service or set ${s.env}.`;
    }
  }
  return { urls, stop: async () => void (await Promise.all(stops.map((f) => f()))) };
}

/** The test Postgres URL, or a failure that says what is missing (never a skip). */
export function databaseUrl(urls: ServiceUrls): string {
  if (!urls.databaseUrl) throw new Error(urls.databaseError ?? 'no PostgreSQL for tests');
  return urls.databaseUrl;
}

/** The test Redis URL, or a failure that says what is missing (never a skip). */
export function redisUrl(urls: ServiceUrls): string {
  if (!urls.redisUrl) throw new Error(urls.redisError ?? 'no Redis for tests');
  return urls.redisUrl;
}
