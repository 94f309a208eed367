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
          // test/cluster runs on a local node (root, containerd, kubelet): its own project, one file
          // at a time, after the others (hack/run-tests.ts), since one node runs per host.
          exclude: ['test/bench/**', 'test/cluster/**'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // 2 cores: the control plane, broker and tests share them.
          maxWorkers: 2,
        },
      },
      {
        // Berth as pods on a local node (issue 33): `make test` runs it after the other projects,
        // `make test-cluster` alone. Each file starts its own control plane and node; one at a time.
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 900_000,
          maxWorkers: 1,
          fileParallelism: false,
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
