import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startGuarded } from './child.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pid the child wrote to `file`, once it has. */
async function pidFrom(file: string, timeoutMs: number): Promise<number> {
  let pid = 0;
  await until(() => {
    try {
      pid = Number(readFileSync(file, 'utf8').trim());
      return pid > 0;
    } catch {
      return false;
    }
  }, timeoutMs);
  return pid;
}

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-guard-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('startGuarded', () => {
  it('stops the child and waits for it on stop()', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'child.pid');
    const c = startGuarded('sleeper', 'sh', ['-c', `echo $$ > ${pidFile}; exec sleep 600`], join(dir, 'log'));
    const childPid = await pidFrom(pidFile, 5000);
    await c.stop();
    expect(alive(childPid)).toBe(false);
  });

  it('kills the child when the parent dies by SIGKILL', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'child.pid');
    const script = `
      import { startGuarded } from ${JSON.stringify(join(import.meta.dirname, 'child.ts'))};
      startGuarded('sleeper', 'sh', ['-c', 'echo $$ > ${pidFile}; exec sleep 600'], ${JSON.stringify(join(dir, 'log'))});
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    const childPid = await pidFrom(pidFile, 10_000);
    expect(alive(childPid)).toBe(true);
    parent.kill('SIGKILL');
    await until(() => !alive(childPid), 5000);
    expect(alive(childPid)).toBe(false);
  });
});
