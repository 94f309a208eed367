/**
 * The images of the local node, built without docker or a registry (issue 33 item 2):
 *
 * - `berth:dev`: the Dockerfile's runtime stage — its `/app` tree built by test/install/image.ts from
 *   the Dockerfile's own COPY/RUN lines, its USER, WORKDIR, ENV, EXPOSE, ENTRYPOINT and CMD read from
 *   the Dockerfile — on a minimal base instead of node:24-slim: the pinned Node 24 binary (the `node`
 *   devDependency) at /usr/local/bin/node, the shared libraries `ldd` names for it and the dynamic
 *   loader at their paths, /etc/passwd and /etc/group with `node` (1000:1000), /tmp (1777) and the
 *   host's CA bundle.
 * - `berth-pause:dev`: the sandbox image, a static `pause` binary alone (hack/build-node.sh builds it
 *   into the node cache directory).
 *
 *   node hack/build-image.ts [--out DIR] [--pause FILE] [--only berth|pause] [--uncompressed]
 *
 * writes DIR/berth.tar and DIR/berth-pause.tar (default DIR: .berth/images) for
 * `ctr -n k8s.io images import`, and prints DIR on its last line. Layers are gzip (level 1) unless
 * --uncompressed, and deterministic: the same checkout gives the same digests. test/install/oci-image.test.ts keeps them in step with the
 * Dockerfile.
 */
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  directoryEntries,
  type FileEntry,
  type ImageArchive,
  type ImageConfig,
  writeImageArchive,
} from '../pkg/kube/oci-archive.ts';
import { buildImageTree, type RuntimeConfig } from '../test/install/image.ts';

const ROOT = join(import.meta.dirname, '..');

export const BERTH_IMAGE = 'berth:dev';
export const PAUSE_IMAGE = 'berth-pause:dev';
/** node:24-slim's PATH. */
export const IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Where the image's Node lives (as in the node images), found through PATH by `node` in ENTRYPOINT. */
export const IMAGE_NODE = 'usr/local/bin/node';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

function isElf(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(4);
    return readSync(fd, b, 0, 4, 0) === 4 && b.toString('latin1') === '\x7fELF';
  } finally {
    closeSync(fd);
  }
}

/** The pinned Node's real binary (the `node` devDependency installs it under node_modules/node). */
export function pinnedNode(): string {
  const pin = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies?.node as string;
  const candidates = [
    join(ROOT, 'node_modules', 'node', 'bin', 'node'),
    join(
      ROOT,
      'node_modules',
      'node',
      'node_modules',
      `node-${process.platform}-${process.arch}`,
      'bin',
      'node',
    ),
  ];
  for (const c of candidates) {
    if (!existsSync(c) || !isElf(c)) continue;
    const version = execFileSync(c, ['--version'], { encoding: 'utf8' }).trim();
    if (version !== `v${pin}`)
      throw new Error(`${c} is ${version}, package.json pins node ${pin}: run npm install`);
    return realpathSync(c);
  }
  throw new Error(
    `the pinned Node binary (devDependency node ${pin}) is not under node_modules/node: run npm install`,
  );
}

/** The shared objects `ldd` resolves for `binary`, the dynamic loader included, at the paths it names. */
export function sharedLibraries(binary: string): string[] {
  const out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  const libs: string[] = [];
  for (const line of out.split('\n')) {
    if (/=>\s*not found/.test(line)) throw new Error(`ldd ${binary}: ${line.trim()}`);
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.push(m[1]);
  }
  if (!libs.some((l) => /\/ld-linux[^/]*\.so/.test(l) || /\/ld-musl/.test(l)))
    throw new Error(`ldd ${binary} names no dynamic loader:\n${out}`);
  return libs;
}

const file = (path: string, data: string, mode = 0o644): FileEntry => ({
  path,
  type: 'file',
  mode,
  uid: 0,
  gid: 0,
  data: Buffer.from(data),
});

/** The minimal base standing in for node:24-slim. */
export function nodeBaseEntries(node = pinnedNode()): FileEntry[] {
  if (!existsSync(CA_BUNDLE)) throw new Error(`${CA_BUNDLE} is missing: apt-get install ca-certificates`);
  const root = { uid: 0, gid: 0 };
  return [
    { path: IMAGE_NODE, type: 'file', mode: 0o755, source: node, ...root },
    ...sharedLibraries(node).map(
      (lib): FileEntry => ({
        path: lib.slice(1),
        type: 'file',
        mode: 0o755,
        source: realpathSync(lib),
        ...root,
      }),
    ),
    file(
      'etc/passwd',
      'root:x:0:0:root:/root:/usr/sbin/nologin\n' +
        'node:x:1000:1000::/home/node:/usr/sbin/nologin\n' +
        'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
    ),
    file('etc/group', 'root:x:0:\nnode:x:1000:\nnogroup:x:65534:\n'),
    file('etc/nsswitch.conf', 'passwd: files\ngroup: files\nhosts: files dns\n'),
    // The kubelet mounts its own over it in a pod; this one serves `ctr run` and chroot.
    file('etc/hosts', '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n'),
    { path: CA_BUNDLE.slice(1), type: 'file', mode: 0o644, source: realpathSync(CA_BUNDLE), ...root },
    { path: 'tmp', type: 'dir', mode: 0o1777, ...root },
    { path: 'root', type: 'dir', mode: 0o700, ...root },
    { path: 'home/node', type: 'dir', mode: 0o755, uid: 1000, gid: 1000 },
  ];
}

/** The image config of the Dockerfile's runtime stage on the minimal base. */
export function berthConfig(runtime: RuntimeConfig): ImageConfig {
  const env = { PATH: IMAGE_PATH, ...runtime.env };
  return {
    User: runtime.user,
    WorkingDir: runtime.workdir,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Entrypoint: runtime.entrypoint,
    Cmd: runtime.cmd,
    ExposedPorts: Object.fromEntries(runtime.exposedPorts.map((p) => [p, {}])),
  };
}

export interface BuildOptions {
  /** gzip the layers (default: yes; ~85 MB instead of ~315 MB for berth:dev, quicker to import). */
  gzip?: boolean;
  name?: string;
}

/** `berth:dev` at `out`: a base layer (Node, libraries, /etc, /tmp) and the Dockerfile's `/app`. */
export async function buildBerthImage(out: string, opts: BuildOptions = {}): Promise<ImageArchive> {
  const ctx = mkdtempSync(join(tmpdir(), 'berth-image-tree-'));
  try {
    const tree = await buildImageTree(ctx, { copy: true });
    const workdir = tree.runtime.workdir.replace(/^\/+/, '');
    if (!workdir) throw new Error('the Dockerfile runtime stage has no WORKDIR for /app');
    return await writeImageArchive(
      {
        name: opts.name ?? BERTH_IMAGE,
        gzip: opts.gzip ?? true,
        layers: [nodeBaseEntries(), directoryEntries(tree.app, workdir)],
        history: [
          'base: pinned Node, its libraries, /etc, /tmp (hack/build-image.ts)',
          'Dockerfile runtime stage /app',
        ],
        config: berthConfig(tree.runtime),
      },
      out,
    );
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

/** The node cache directory hack/build-node.sh fills (`node-<KUBE_VERSION>` under the cache root). */
export function nodeCacheDir(): string {
  const script = readFileSync(join(ROOT, 'hack', 'build-kube.sh'), 'utf8');
  const version = process.env.KUBE_VERSION ?? /KUBE_VERSION="\$\{KUBE_VERSION:-([^}]+)\}"/.exec(script)?.[1];
  const cache =
    process.env.BERTH_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'berth');
  return join(cache, `node-${version}`);
}

/** Refuses a dynamically linked binary: a scratch image has no loader or libraries. */
export function assertStatic(binary: string): void {
  let out = '';
  try {
    out = execFileSync('ldd', [binary], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    out =
      String((err as { stdout?: string }).stdout ?? '') + String((err as { stderr?: string }).stderr ?? '');
  }
  if (!/not a dynamic executable|statically linked/.test(out))
    throw new Error(`${binary} is dynamically linked; a scratch image needs a static binary:\n${out}`);
}

/** `berth-pause:dev`: the static pause binary at /pause, as the upstream pause image (65535:65535). */
export async function buildPauseImage(
  out: string,
  pause = join(nodeCacheDir(), 'pause'),
  opts: BuildOptions = {},
): Promise<ImageArchive> {
  if (!existsSync(pause))
    throw new Error(`${pause} does not exist: run hack/build-node.sh (or pass --pause FILE)`);
  assertStatic(pause);
  return writeImageArchive(
    {
      name: opts.name ?? PAUSE_IMAGE,
      gzip: opts.gzip ?? true,
      layers: [[{ path: 'pause', type: 'file', mode: 0o755, uid: 0, gid: 0, source: realpathSync(pause) }]],
      history: ['static pause binary'],
      config: { User: '65535:65535', Entrypoint: ['/pause'] },
    },
    out,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: join(ROOT, '.berth', 'images') },
      pause: { type: 'string' },
      only: { type: 'string' },
      uncompressed: { type: 'boolean', default: false },
    },
  });
  const dir = resolve(values.out);
  mkdirSync(dir, { recursive: true });
  const which = values.only ? values.only.split(',') : ['berth', 'pause'];
  for (const w of which) if (w !== 'berth' && w !== 'pause') throw new Error(`--only ${w}: berth or pause`);
  const report = (a: ImageArchive, ms: number) =>
    console.error(
      `build-image: ${a.name} ${a.file} ${(a.size / 1e6).toFixed(1)} MB ${a.manifest.digest} (${ms} ms)`,
    );
  for (const w of which) {
    const start = Date.now();
    const a =
      w === 'berth'
        ? await buildBerthImage(join(dir, 'berth.tar'), { gzip: !values.uncompressed })
        : await buildPauseImage(join(dir, 'berth-pause.tar'), values.pause, { gzip: !values.uncompressed });
    report(a, Date.now() - start);
  }
  console.log(dir);
}

if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(import.meta.filename)) {
  main().catch((err: Error) => {
    console.error(`build-image: ${err.message}`);
    process.exit(1);
  });
}
