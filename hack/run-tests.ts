/**
 * `make test`: the static checks (lint, type-check, CRD drift), the vitest projects (the cluster
 * one last, alone), then one closing line `N passed, N failed[, N skipped]` for CI. Each static
 * check counts as one test.
 * Extra arguments are passed to vitest (e.g. a file filter).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const report = join(root, '.vitest-report.json');
// Tools start through `#!/usr/bin/env node`: make that the pinned Node whoever started us.
const env = {
  ...process.env,
  PATH: `${dirname(process.execPath)}:${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
};
let passed = 0;
let failed = 0;
let skipped = 0;
/** What failed, repeated just above the closing line: CI keeps only the tail of the output. */
const failures: string[] = [];

function step(name: string, cmd: string, args: string[]): boolean {
  console.log(`\n== ${name}`);
  const r = spawnSync(cmd, args, { cwd: root, env, stdio: 'inherit' });
  const ok = r.status === 0;
  if (ok) passed++;
  else {
    failed++;
    failures.push(name);
  }
  console.log(`== ${name}: ${ok ? 'ok' : 'FAILED'}`);
  return ok;
}

step('lint (biome)', bin('biome'), ['check', '.']);
step('type-check (tsc)', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']);
step('CRD drift', process.execPath, [join(root, 'hack', 'gen-crds.ts'), '--check']);

interface FileResult {
  name: string;
  status: string;
  message?: string;
  assertionResults?: { fullName: string; status: string; failureMessages?: string[] }[];
}

/** One line per failed test (file, name, the first line of why) or per file that failed to load. */
function failedTests(files: FileResult[]): string[] {
  const firstLine = (text = '') =>
    text
      .split('\n')
      .find((l) => l.trim())
      ?.trim()
      .slice(0, 300) ?? '';
  return files.flatMap((f) => {
    const file = f.name.startsWith(root) ? f.name.slice(root.length + 1) : f.name;
    const tests = (f.assertionResults ?? []).filter((t) => t.status === 'failed');
    if (tests.length === 0 && f.status === 'failed') return [`${file}: ${firstLine(f.message)}`];
    return tests.map((t) => `${file} > ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
  });
}

/**
 * One vitest run, its counts added to the totals. `projects`: which vitest projects (all when empty).
 * The cluster project runs alone after the others: its local node takes the host's containerd,
 * kubelet and network, and the CPU the other suites' timings need.
 */
function vitestRun(title: string, projects: string[]): void {
  rmSync(report, { force: true });
  console.log(`\n== tests (vitest: ${title})`);
  const only = projects.flatMap((p) => ['--project', p]);
  const vitest = spawnSync(
    bin('vitest'),
    [
      'run',
      ...only,
      // A file filter may leave a project with nothing to run: that is not a failure.
      '--passWithNoTests',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
      ...process.argv.slice(2),
    ],
    { cwd: root, env, stdio: 'inherit' },
  );
  if (existsSync(report)) {
    const r = JSON.parse(readFileSync(report, 'utf8')) as {
      numPassedTests: number;
      numFailedTests: number;
      numPendingTests: number;
      numTodoTests: number;
      numFailedTestSuites: number;
      testResults?: FileResult[];
    };
    failures.push(...failedTests(r.testResults ?? []));
    passed += r.numPassedTests;
    failed +=
      r.numFailedTests +
      (r.numFailedTests === 0 && vitest.status !== 0 ? Math.max(1, r.numFailedTestSuites) : 0);
    skipped += r.numPendingTests + r.numTodoTests;
  } else if (vitest.status !== 0) {
    failed++;
    failures.push(`vitest (${title}): no report, it failed before running tests`);
    console.error(`vitest (${title}) wrote no report: it failed before running tests`);
  }
}

vitestRun('unit + integration + broker-durable', ['unit', 'integration', 'broker-durable']);
vitestRun('cluster, on a local node', ['cluster']);

if (failures.length > 0) console.log(`\nFailed:\n${failures.map((f) => `- ${f}`).join('\n')}`);
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
