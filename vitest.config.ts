import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['pkg/**/*.test.ts', 'cmd/**/*.test.ts', 'hack/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/bench/**'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // 2 cores: the control plane, broker and tests share them.
          maxWorkers: 2,
        },
      },
      {
        // The broker's HTTP suites again, unchanged, against the durable backends (PostgreSQL for
        // messages, events and sessions, Redis for chunks): see test/broker/harness.ts.
        test: {
          name: 'broker-durable',
          include: ['test/broker/{messages,watch,events,bad-input,traces}.test.ts'],
          env: { BERTH_TEST_BROKER: 'durable' },
          globalSetup: ['test/broker/durable-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
        },
      },
    ],
  },
});
