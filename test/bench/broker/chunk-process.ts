import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** chunk-server.ts as a process of its own; resolves once it listens. */
export async function spawnBerthScript(backend: 'memory' | 'redis', env: NodeJS.ProcessEnv) {
  const proc = spawn(process.execPath, [join(import.meta.dirname, 'chunk-server.ts'), backend], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((r) => proc.once('exit', r));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += String(d);
      const m = /"port":(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', () => reject(new Error(`chunk-server exited:\n${out}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
