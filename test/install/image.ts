/**
 * The image's file tree built from the Dockerfile without docker (unavailable here): the build
 * stage's COPY and RUN lines run in a scratch directory, the runtime stage's COPY lines assemble
 * `/app`. Two steps stand in for what needs the registry: `npm install` uses the checkout's
 * node_modules (installed from the same lock), and `npm prune --omit=dev` becomes a node_modules
 * holding only the lock's production packages — so code that imports a dev dependency at run time
 * fails here as it would in the image.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/process.ts';

const run = promisify(execFile);

interface Instruction {
  op: string;
  args: string;
}

/** Instructions per stage, with `\` continuations joined and comments dropped. */
export function readDockerfile(path = join(ROOT, 'Dockerfile')): Instruction[][] {
  const stages: Instruction[][] = [];
  const text = readFileSync(path, 'utf8').replace(/\\\n/g, ' ');
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === 'FROM') stages.push([]);
    stages.at(-1)?.push({ op: op.toUpperCase(), args });
  }
  return stages;
}

export interface ImageTree {
  /** The runtime stage's WORKDIR, here. */
  app: string;
  /** ENTRYPOINT with the image's absolute paths mapped here. */
  entrypoint: string[];
  env: Record<string, string>;
  user: string;
  /** Every command the build stage ran (npm install / prune stood in for, see above). */
  ran: string[];
}

/** The lock's production packages, linked into `dir` (what `npm prune --omit=dev` leaves). */
function productionNodeModules(dir: string): void {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  for (const [key, entry] of Object.entries(lock.packages as Record<string, { dev?: boolean }>)) {
    if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(key) || entry.dev) continue;
    if (!existsSync(join(ROOT, key))) continue; // an optional binary of another platform
    mkdirSync(dirname(join(dir, '..', key)), { recursive: true });
    symlinkSync(join(ROOT, key), join(dir, '..', key));
  }
}

/** COPY [--from=…] <src…> <dest>: sources and destination. */
function copyArgs(args: string): { from?: string; srcs: string[]; dest: string } {
  const words = args.split(/\s+/);
  const from = words[0]?.startsWith('--from=') ? words.shift()?.slice('--from='.length) : undefined;
  const dest = words.pop() ?? '.';
  return { from, srcs: words, dest };
}

function copyInto(src: string, workdir: string, dest: string, many: boolean): void {
  const target = posix.isAbsolute(dest) ? dest : join(workdir, dest);
  const to = dest.endsWith('/') || many ? join(target, basename(src)) : target;
  mkdirSync(dirname(to), { recursive: true });
  cpSync(src, to, { recursive: true });
}

/**
 * Builds both stages under `ctx`: the first stage's WORKDIR becomes `<ctx>/build`, the last one's
 * `<ctx>/app`.
 */
export async function buildImageTree(ctx: string): Promise<ImageTree> {
  const stages = readDockerfile();
  const build = stages[0] ?? [];
  const runtime = stages.at(-1) ?? [];
  const buildDir = join(ctx, 'build');
  const app = join(ctx, 'app');
  const ran: string[] = [];
  let buildWorkdir = '/';
  let pruned = false;
  // The checkout's Node (the pinned Node 24, like the base image) first on PATH, as in the image.
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
  mkdirSync(buildDir, { recursive: true });
  for (const { op, args } of build) {
    if (op === 'WORKDIR') buildWorkdir = args;
    if (op === 'COPY') {
      const { srcs, dest } = copyArgs(args);
      for (const s of srcs) copyInto(join(ROOT, s), buildDir, dest, srcs.length > 1);
    }
    if (op !== 'RUN') continue;
    for (const cmd of args.split('&&').map((c) => c.trim())) {
      ran.push(cmd);
      if (/^npm (install|ci)\b/.test(cmd)) {
        if (!existsSync(join(buildDir, 'node_modules')))
          symlinkSync(join(ROOT, 'node_modules'), join(buildDir, 'node_modules'));
      } else if (/^npm prune\b.*--omit=dev/.test(cmd)) {
        pruned = true;
      } else {
        await run('sh', ['-c', cmd], { cwd: buildDir, env, maxBuffer: 16 * 1024 * 1024 }).catch(
          (err: { stdout?: string; stderr?: string; message: string }) => {
            throw new Error(`RUN ${cmd} failed: ${err.stderr || err.stdout || err.message}`);
          },
        );
      }
    }
  }
  if (!pruned) throw new Error('the build stage does not prune dev dependencies (npm prune --omit=dev)');

  const tree: ImageTree = { app, entrypoint: [], env: {}, user: '', ran };
  let appWorkdir = '/';
  mkdirSync(app, { recursive: true });
  const here = (p: string) => (p.startsWith(appWorkdir) ? join(app, p.slice(appWorkdir.length)) : p);
  for (const { op, args } of runtime) {
    if (op === 'WORKDIR') appWorkdir = args;
    if (op === 'ENV') {
      for (const [, k = '', v = ''] of args.matchAll(/(\w+)=("[^"]*"|\S+)/g))
        tree.env[k] = v.replace(/^"|"$/g, '');
    }
    if (op === 'USER') tree.user = args;
    if (op === 'ENTRYPOINT') tree.entrypoint = (JSON.parse(args) as string[]).map(here);
    if (op !== 'COPY') continue;
    const { from, srcs, dest } = copyArgs(args);
    for (const s of srcs) {
      if (from === undefined) {
        copyInto(join(ROOT, s), app, dest, srcs.length > 1);
      } else if (posix.relative(buildWorkdir, s) === 'node_modules') {
        productionNodeModules(join(app, 'node_modules'));
      } else {
        copyInto(join(buildDir, posix.relative(buildWorkdir, s)), app, dest, srcs.length > 1);
      }
    }
  }
  return tree;
}
