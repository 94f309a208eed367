/**
 * The image's file tree built from the Dockerfile without docker (unavailable here): the build
 * stage's COPY and RUN lines run in a scratch directory, the runtime stage's COPY lines assemble
 * `/app`. Two steps stand in for what needs the registry: `npm install` uses the checkout's
 * node_modules (installed from the same lock), and `npm prune --omit=dev` becomes a node_modules
 * holding only the lock's production packages — so code that imports a dev dependency at run time
 * fails here as it would in the image. By default those packages are symlinks into the checkout (for
 * test/install/dist.test.ts); `{ copy: true }` makes every file under `app/` a real file (no symlink
 * leaves the tree), for the image archive of hack/build-image.ts.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/process.ts';

const run = promisify(execFile);

export interface Instruction {
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

/** The runtime stage's image settings, in the image's own paths (what an image config carries). */
export interface RuntimeConfig {
  /** The last WORKDIR. */
  workdir: string;
  entrypoint: string[];
  cmd: string[];
  /** EXPOSE's ports, `3000/tcp` style. */
  exposedPorts: string[];
  env: Record<string, string>;
  user: string;
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
  runtime: RuntimeConfig;
}

/** An exec-form (JSON array) ENTRYPOINT or CMD; the image has no shell for the shell form. */
function execForm(op: string, args: string): string[] {
  try {
    const words = JSON.parse(args) as unknown;
    if (Array.isArray(words) && words.every((w) => typeof w === 'string')) return words;
  } catch {}
  throw new Error(`${op} ${args}: only the exec form (a JSON array) is supported`);
}

/** The runtime stage's ENV, USER, WORKDIR, EXPOSE, ENTRYPOINT and CMD lines. */
export function runtimeConfig(runtime: Instruction[] = readDockerfile().at(-1) ?? []): RuntimeConfig {
  const c: RuntimeConfig = { workdir: '/', entrypoint: [], cmd: [], exposedPorts: [], env: {}, user: '' };
  for (const { op, args } of runtime) {
    if (op === 'WORKDIR') c.workdir = posix.resolve(c.workdir, args);
    if (op === 'ENV') {
      for (const [, k = '', v = ''] of args.matchAll(/(\w+)=("[^"]*"|\S+)/g))
        c.env[k] = v.replace(/^"|"$/g, '');
    }
    if (op === 'USER') c.user = args;
    if (op === 'EXPOSE')
      for (const p of args.split(/\s+/).filter(Boolean))
        c.exposedPorts.push(p.includes('/') ? p : `${p}/tcp`);
    // (Docker's reset of a base image's CMD by ENTRYPOINT does not apply: the base here has none.)
    if (op === 'ENTRYPOINT') c.entrypoint = execForm(op, args);
    if (op === 'CMD') c.cmd = execForm(op, args);
  }
  return c;
}

/**
 * `src` as real files at `dst`, symlinks resolved: files are hard links to the checkout's when both
 * are on one filesystem (nothing writes to the tree), copies otherwise.
 */
function materialize(src: string, dst: string): void {
  const st = statSync(src);
  if (st.isDirectory()) {
    mkdirSync(dst, { recursive: true });
    for (const name of readdirSync(src)) materialize(join(src, name), join(dst, name));
    return;
  }
  try {
    linkSync(realpathSync(src), dst);
  } catch (err) {
    if (!['EXDEV', 'EPERM', 'EMLINK'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    copyFileSync(src, dst);
  }
}

/**
 * The lock's production packages in `dir` (what `npm prune --omit=dev` leaves): symlinks into the
 * checkout, or real files (symlinks inside them resolved) with `copy`.
 */
function productionNodeModules(dir: string, copy: boolean): void {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  for (const [key, entry] of Object.entries(lock.packages as Record<string, { dev?: boolean }>)) {
    if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(key) || entry.dev) continue;
    if (!existsSync(join(ROOT, key))) continue; // an optional binary of another platform
    mkdirSync(dirname(join(dir, '..', key)), { recursive: true });
    if (copy) materialize(join(ROOT, key), join(dir, '..', key));
    else symlinkSync(join(ROOT, key), join(dir, '..', key));
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
  cpSync(src, to, { recursive: true, dereference: true });
}

/**
 * Builds both stages under `ctx`: the first stage's WORKDIR becomes `<ctx>/build`, the last one's
 * `<ctx>/app`.
 */
export async function buildImageTree(ctx: string, opts: { copy?: boolean } = {}): Promise<ImageTree> {
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

  const config = runtimeConfig(runtime);
  const tree: ImageTree = { app, entrypoint: [], env: config.env, user: config.user, ran, runtime: config };
  let appWorkdir = '/';
  mkdirSync(app, { recursive: true });
  const here = (p: string) => (p.startsWith(appWorkdir) ? join(app, p.slice(appWorkdir.length)) : p);
  for (const { op, args } of runtime) {
    if (op === 'WORKDIR') appWorkdir = args;
    if (op === 'ENTRYPOINT') tree.entrypoint = execForm(op, args).map(here);
    if (op !== 'COPY') continue;
    const { from, srcs, dest } = copyArgs(args);
    for (const s of srcs) {
      if (from === undefined) {
        copyInto(join(ROOT, s), app, dest, srcs.length > 1);
      } else if (posix.relative(buildWorkdir, s) === 'node_modules') {
        productionNodeModules(join(app, 'node_modules'), opts.copy === true);
      } else {
        copyInto(join(buildDir, posix.relative(buildWorkdir, s)), app, dest, srcs.length > 1);
      }
    }
  }
  return tree;
}
