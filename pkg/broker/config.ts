import { z } from 'zod';

const MB = 1024 * 1024;
const DAY = 24 * 3600;

const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a non-negative integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .optional()
    .transform((v) => v ?? def);

const url = (schemes: string[]) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          return schemes.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      `must be a URL with scheme ${schemes.join(' or ')}`,
    )
    .optional();

/** Every environment variable of the broker, validated at start (docs/broker.md lists them). */
export const brokerEnvSchema = z
  .object({
    PORT: int(8080, 0, 65535),
    BROKER_HOST: z.string().trim().min(1).optional().default('0.0.0.0'),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .optional()
      .default('info'),
    MESSAGE_BACKEND: z.enum(['memory', 'postgres']).optional().default('memory'),
    EVENT_BACKEND: z.enum(['memory', 'postgres']).optional().default('memory'),
    SESSIONS_BACKEND: z.enum(['memory', 'postgres']).optional().default('memory'),
    CHUNK_BACKEND: z.enum(['memory', 'redis']).optional().default('memory'),
    DATABASE_URL: url(['postgres:', 'postgresql:']),
    DATABASE_POOL_SIZE: int(10, 1, 1000),
    MIGRATE_ON_START: z
      .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
      .optional()
      .transform((v) => v === 'true' || v === '1'),
    REAP_INTERVAL_SECONDS: int(30, 1, 86_400),
    REDIS_URL: url(['redis:', 'rediss:']),
    REDIS_CA_FILE: z.string().trim().min(1).optional(),
    REDIS_KEY_PREFIX: z.string().trim().min(1).max(200).optional(),
    BODY_LIMIT_BYTES: int(10 * MB, 1024),
    BROKER_PERSIST_DIR: z.string().trim().min(1).optional(),
    BROKER_PERSIST_FLUSH_MS: int(100, 1, 60_000),
    BROKER_MAX_MESSAGES: int(1_000_000, 1),
    BROKER_MAX_MESSAGE_BYTES: int(256 * MB, 1024),
    BROKER_MAX_CONVERSATIONS: int(100_000, 1),
    BROKER_MAX_CHUNKS: int(500_000, 1),
    BROKER_MAX_CHUNK_BYTES: int(128 * MB, 1024),
    BROKER_MAX_STREAMS: int(10_000, 1),
    BROKER_MAX_SPANS: int(500_000, 1),
    BROKER_MAX_SPAN_BYTES: int(128 * MB, 1024),
    BROKER_MAX_EVENTS: int(500_000, 1),
    BROKER_MAX_EVENT_BYTES: int(128 * MB, 1024),
    BROKER_MAX_SESSIONS: int(10_000, 1),
    MESSAGE_VISIBILITY_TTL_SECONDS: int(30 * DAY, 1),
    EVENT_VISIBILITY_TTL_SECONDS: int(30 * DAY, 1),
    SESSIONS_VISIBILITY_TTL_SECONDS: int(30 * DAY, 1),
    REDIS_STREAM_TTL_SECONDS: int(3600, 1),
    SSE_HEARTBEAT_SECONDS: int(15, 1, 3600),
    SSE_MAX_BUFFERED_BYTES: int(4 * MB, 1024),
    SSE_FLUSH_MS: int(20, 0, 1000),
    OTLP_DECODE_THREAD: z
      .enum(['auto', 'on', 'off'], { message: 'must be auto, on or off' })
      .optional()
      .default('auto'),
    STREAM_IDLE_TIMEOUT_SECONDS: int(300, 1),
  })
  .superRefine((e, ctx) => {
    const needsDb = [e.MESSAGE_BACKEND, e.EVENT_BACKEND, e.SESSIONS_BACKEND].includes('postgres');
    if (needsDb && !e.DATABASE_URL)
      ctx.addIssue({
        code: 'custom',
        path: ['DATABASE_URL'],
        message: 'is required when a backend is postgres',
      });
    if (e.CHUNK_BACKEND === 'redis' && !e.REDIS_URL)
      ctx.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'is required when CHUNK_BACKEND=redis' });
    const floor = Math.max(e.MESSAGE_VISIBILITY_TTL_SECONDS, e.EVENT_VISIBILITY_TTL_SECONDS);
    if (e.SESSIONS_VISIBILITY_TTL_SECONDS < floor)
      ctx.addIssue({
        code: 'custom',
        path: ['SESSIONS_VISIBILITY_TTL_SECONDS'],
        message: `must be at least the message and event TTLs (${floor})`,
      });
  });

export type BrokerEnv = z.infer<typeof brokerEnvSchema>;

export interface BrokerConfig {
  port: number;
  host: string;
  logLevel: string;
  backends: { messages: string; events: string; sessions: string; chunks: string };
  databaseUrl?: string;
  /** PostgreSQL: connections per process, migrate at start, how often expired rows are reaped. */
  database: { poolSize: number; migrateOnStart: boolean; reapIntervalMs: number };
  redisUrl?: string;
  redisCaFile?: string;
  /** Prefix of the chunk store's keys (brokers sharing one Redis keep apart by prefix). */
  redisKeyPrefix?: string;
  bodyLimitBytes: number;
  persistDir?: string;
  persistFlushMs: number;
  caps: {
    messages: { maxItems: number; maxBytes: number };
    conversations: number;
    chunks: { maxItems: number; maxBytes: number };
    streams: number;
    spans: { maxItems: number; maxBytes: number };
    events: { maxItems: number; maxBytes: number };
    sessions: number;
  };
  ttl: { messagesSeconds: number; eventsSeconds: number; sessionsSeconds: number; streamsSeconds: number };
  sse: { heartbeatMs: number; maxBufferedBytes: number; streamIdleMs: number; flushMs: number };
  /** How often expired records are swept. */
  sweepMs: number;
  /** Whether OTLP exports are decoded on a thread of their own (`auto`: with more than one core). */
  otlpDecodeThread: 'auto' | 'on' | 'off';
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment; a bad value throws a ConfigError naming each offending variable. */
export function loadBrokerConfig(env: NodeJS.ProcessEnv = process.env): BrokerConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const r = brokerEnvSchema.safeParse(present);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`);
    throw new ConfigError(`invalid broker configuration:\n  ${lines.join('\n  ')}`);
  }
  return fromEnv(r.data);
}

function fromEnv(e: BrokerEnv): BrokerConfig {
  return {
    port: e.PORT,
    host: e.BROKER_HOST,
    logLevel: e.LOG_LEVEL,
    backends: {
      messages: e.MESSAGE_BACKEND,
      events: e.EVENT_BACKEND,
      sessions: e.SESSIONS_BACKEND,
      chunks: e.CHUNK_BACKEND,
    },
    databaseUrl: e.DATABASE_URL,
    database: {
      poolSize: e.DATABASE_POOL_SIZE,
      migrateOnStart: e.MIGRATE_ON_START,
      reapIntervalMs: e.REAP_INTERVAL_SECONDS * 1000,
    },
    redisUrl: e.REDIS_URL,
    redisCaFile: e.REDIS_CA_FILE,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    persistDir: e.BROKER_PERSIST_DIR,
    persistFlushMs: e.BROKER_PERSIST_FLUSH_MS,
    caps: {
      messages: { maxItems: e.BROKER_MAX_MESSAGES, maxBytes: e.BROKER_MAX_MESSAGE_BYTES },
      conversations: e.BROKER_MAX_CONVERSATIONS,
      chunks: { maxItems: e.BROKER_MAX_CHUNKS, maxBytes: e.BROKER_MAX_CHUNK_BYTES },
      streams: e.BROKER_MAX_STREAMS,
      spans: { maxItems: e.BROKER_MAX_SPANS, maxBytes: e.BROKER_MAX_SPAN_BYTES },
      events: { maxItems: e.BROKER_MAX_EVENTS, maxBytes: e.BROKER_MAX_EVENT_BYTES },
      sessions: e.BROKER_MAX_SESSIONS,
    },
    ttl: {
      messagesSeconds: e.MESSAGE_VISIBILITY_TTL_SECONDS,
      eventsSeconds: e.EVENT_VISIBILITY_TTL_SECONDS,
      sessionsSeconds: e.SESSIONS_VISIBILITY_TTL_SECONDS,
      streamsSeconds: e.REDIS_STREAM_TTL_SECONDS,
    },
    sse: {
      heartbeatMs: e.SSE_HEARTBEAT_SECONDS * 1000,
      maxBufferedBytes: e.SSE_MAX_BUFFERED_BYTES,
      streamIdleMs: e.STREAM_IDLE_TIMEOUT_SECONDS * 1000,
      flushMs: e.SSE_FLUSH_MS,
    },
    sweepMs: 30_000,
    otlpDecodeThread: e.OTLP_DECODE_THREAD,
  };
}

/** Defaults with overrides (tests, `berth up`). */
export function brokerConfig(overrides: Partial<BrokerConfig> = {}): BrokerConfig {
  return { ...loadBrokerConfig({}), ...overrides };
}
