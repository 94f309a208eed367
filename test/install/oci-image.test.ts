/**
 * The local node's images, built without docker (hack/build-image.ts, issue 33 item 2), are the
 * Dockerfile's: the archive's index, manifest, config and layers agree by digest; the config's
 * ENTRYPOINT, CMD, USER, WORKDIR, ENV and EXPOSE are the Dockerfile's runtime stage's; the layers
 * hold its /app on a minimal base whose Node runs Berth with nothing from the host (chroot); and
 * containerd's `ctr images import` takes both archives and tags them.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statfsSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { createGunzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BERTH_IMAGE,
  buildBerthImage,
  buildPauseImage,
  IMAGE_NODE,
  IMAGE_PATH,
  nodeCacheDir,
  PAUSE_IMAGE,
  pinnedNode,
  sharedLibraries,
} from '../../hack/build-image.ts';
import {
  directoryEntries,
  type ImageArchive,
  writeImageArchive,
  writeLayer,
} from '../../pkg/kube/oci-archive.ts';
import { ROOT, spawnProcess } from '../support/process.ts';

const run = promisify(execFile);
/**
 * A tmpfs when there is one with room (about 1 GB is used: the archives, a rootfs, containerd's
 * content and snapshots): creating the image's 20k files takes ~15 s on this VM's disk, < 1 s there.
 */
function scratchRoot(): string {
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.type === 0x01021994 && fs.bavail * fs.bsize > 4e9) return '/dev/shm';
  } catch {}
  return tmpdir();
}
const dir = mkdtempSync(join(scratchRoot(), 'berth-oci-'));
const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
let berth: ImageArchive;
let pause: ImageArchive;
let buildMs = 0;

/** The Dockerfile's last stage, read here on its own (not through test/install/image.ts). */
function dockerfileRuntime(): Record<string, string[]> {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stage = text.slice(text.lastIndexOf('\nFROM '));
  const lines: Record<string, string[]> = {};
  for (const [, op = '', args = ''] of stage.matchAll(/^(ENV|USER|WORKDIR|EXPOSE|ENTRYPOINT|CMD)\s+(.*)$/gm))
    lines[op] = [...(lines[op] ?? []), args.trim()];
  return lines;
}

const extracted = new Map<string, string>();
const blobPath = (digest: string) => `blobs/sha256/${digest.replace('sha256:', '')}`;

/**
 * The archive unpacked (once), all but its layer blobs: those are streamed out of the archive
 * (`layer`) rather than written to disk a second time.
 */
function unpacked(a: ImageArchive) {
  let out = extracted.get(a.file);
  if (!out) {
    out = mkdtempSync(join(dir, 'archive-'));
    execFileSync('tar', [
      '-xf',
      a.file,
      '-C',
      out,
      ...a.layers.map((l) => `--exclude=${blobPath(l.digest)}`),
    ]);
    extracted.set(a.file, out);
  }
  const root = out;
  const json = (p: string) => JSON.parse(readFileSync(join(root, p), 'utf8'));
  const blob = (digest: string) => readFileSync(join(root, blobPath(digest)));
  const config = () => {
    const manifest = JSON.parse(blob(json('index.json').manifests[0].digest).toString());
    return JSON.parse(blob(manifest.config.digest).toString()).config;
  };
  /** A layer blob's digest and size, and its uncompressed tar's digest (the diff_id). */
  const layer = async (digest: string, gzip: boolean) => {
    const tar = spawn('tar', ['-xOf', a.file, blobPath(digest)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const packed = createHash('sha256');
    const raw = createHash('sha256');
    let size = 0;
    const gunzip = gzip ? createGunzip() : undefined;
    gunzip?.on('data', (d: Buffer) => raw.update(d));
    const done = gunzip ? new Promise((r) => gunzip.on('end', r)) : Promise.resolve();
    for await (const chunk of tar.stdout) {
      size += (chunk as Buffer).length;
      packed.update(chunk as Buffer);
      if (gunzip) gunzip.write(chunk);
      else raw.update(chunk as Buffer);
    }
    gunzip?.end();
    await done;
    return { digest: `sha256:${packed.digest('hex')}`, size, diffId: `sha256:${raw.digest('hex')}` };
  };
  return { out: root, json, blob, config, layer };
}

const rootfsDirs = new Map<string, string>();

/** Every layer of `a` extracted in order into one rootfs (once), owners and modes kept (as root). */
function rootfs(a: ImageArchive): string {
  let fs = rootfsDirs.get(a.file);
  if (fs) return fs;
  fs = mkdtempSync(join(dir, 'rootfs-'));
  chmodSync(fs, 0o755); // an image's / (mkdtemp makes 0700)
  for (const l of a.layers)
    execFileSync('bash', [
      '-o',
      'pipefail',
      '-c',
      'tar -xOf "$1" "$2" | tar -xp $4 -f - -C "$3" --numeric-owner',
      '-',
      a.file,
      blobPath(l.digest),
      fs,
      l.mediaType.endsWith('+gzip') ? '-z' : '',
    ]);
  rootfsDirs.set(a.file, fs);
  return fs;
}

/** A static pause for the sandbox image: hack/build-node.sh's when it is built, else a tiny C one. */
function pauseBinary(): string {
  const cached = join(nodeCacheDir(), 'pause');
  if (existsSync(cached)) return cached;
  const src = join(dir, 'pause.c');
  writeFileSync(
    src,
    '#include <signal.h>\n#include <unistd.h>\nstatic void stop(int s) { (void)s; _exit(0); }\n' +
      'int main(void) { signal(SIGTERM, stop); signal(SIGINT, stop); for (;;) pause(); }\n',
  );
  execFileSync('gcc', ['-static', '-Os', '-o', join(dir, 'pause'), src]);
  return join(dir, 'pause');
}

beforeAll(async () => {
  const start = Date.now();
  berth = await buildBerthImage(join(dir, 'berth.tar'));
  buildMs = Date.now() - start;
  pause = await buildPauseImage(join(dir, 'berth-pause.tar'), pauseBinary());
  console.log(
    `berth:dev ${(berth.size / 1e6).toFixed(1)} MB built in ${buildMs} ms; berth-pause:dev ${(pause.size / 1e6).toFixed(1)} MB`,
  );
}, 300_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the OCI archives of hack/build-image.ts', () => {
  it('agree by digest and size: index → manifest → config and layers, diff_ids, docker manifest.json', async () => {
    for (const [a, ref, tag] of [
      [berth, 'docker.io/library/berth:dev', BERTH_IMAGE],
      [pause, 'docker.io/library/berth-pause:dev', PAUSE_IMAGE],
    ] as const) {
      const { out, json, blob, layer } = unpacked(a);
      expect(json('oci-layout')).toEqual({ imageLayoutVersion: '1.0.0' });
      // Every blob is named by its own digest (the layers' are checked below).
      for (const f of readdirSync(join(out, 'blobs', 'sha256')))
        expect(sha256(readFileSync(join(out, 'blobs', 'sha256', f)))).toBe(`sha256:${f}`);
      const index = json('index.json');
      expect(index.manifests).toHaveLength(1);
      const [desc] = index.manifests;
      expect(desc.annotations['io.containerd.image.name']).toBe(ref);
      expect(desc.annotations['org.opencontainers.image.ref.name']).toBe('dev');
      const manifestBytes = blob(desc.digest);
      expect(manifestBytes.length).toBe(desc.size);
      expect(desc.digest).toBe(a.manifest.digest);
      const manifest = JSON.parse(manifestBytes.toString());
      expect(manifest.mediaType).toBe('application/vnd.oci.image.manifest.v1+json');
      const configBytes = blob(manifest.config.digest);
      expect(configBytes.length).toBe(manifest.config.size);
      const config = JSON.parse(configBytes.toString());
      expect(config).toMatchObject({ os: 'linux', rootfs: { type: 'layers' } });
      expect(config.rootfs.diff_ids).toHaveLength(manifest.layers.length);
      expect(manifest.layers.map((l: { digest: string }) => l.digest)).toEqual(a.layers.map((l) => l.digest));
      for (const [i, l] of (
        manifest.layers as { digest: string; size: number; mediaType: string }[]
      ).entries()) {
        const got = await layer(l.digest, l.mediaType.endsWith('+gzip'));
        expect(got.digest).toBe(l.digest);
        expect(got.size).toBe(l.size);
        expect(got.diffId).toBe(config.rootfs.diff_ids[i]);
      }
      // The docker-archive view of the same blobs (docker load, podman load).
      expect(json('manifest.json')).toEqual([
        {
          Config: blobPath(manifest.config.digest),
          RepoTags: [tag],
          Layers: manifest.layers.map((l: { digest: string }) => blobPath(l.digest)),
        },
      ]);
    }
  });

  it("berth:dev's config is the Dockerfile's runtime stage: ENTRYPOINT, CMD, USER, WORKDIR, ENV, EXPOSE", () => {
    const config = unpacked(berth).config();
    const d = dockerfileRuntime();
    expect(config.Entrypoint).toEqual(JSON.parse(d.ENTRYPOINT?.at(-1) ?? 'null'));
    expect(config.Cmd).toEqual(JSON.parse(d.CMD?.at(-1) ?? 'null'));
    expect(config.User).toBe(d.USER?.at(-1));
    expect(config.User).toMatch(/^[1-9]\d*:[1-9]\d*$/); // numeric, non-root: runAsNonRoot can check it
    expect(config.WorkingDir).toBe(d.WORKDIR?.at(-1));
    const env = (d.ENV ?? []).flatMap((l) =>
      [...l.matchAll(/(\w+)=("[^"]*"|\S+)/g)].map((m) => `${m[1]}=${m[2]}`),
    );
    expect(env).toContain('NODE_ENV=production');
    expect(config.Env).toEqual([`PATH=${IMAGE_PATH}`, ...env]);
    const ports = (d.EXPOSE ?? [])
      .flatMap((l) => l.split(/\s+/))
      .map((p) => (p.includes('/') ? p : `${p}/tcp`));
    expect(ports.length).toBeGreaterThan(0);
    expect(Object.keys(config.ExposedPorts).sort()).toEqual(ports.sort());
  });

  it('berth:dev holds the Dockerfile /app (pruned node_modules, no symlink out) on the minimal base', () => {
    const fs = rootfs(berth);
    const app = join(fs, 'app');
    expect(readdirSync(app).sort()).toEqual(['crds', 'dist', 'manifests', 'node_modules', 'package.json']);
    expect(readFileSync(join(app, 'package.json'), 'utf8')).toBe(
      readFileSync(join(ROOT, 'package.json'), 'utf8'),
    );
    expect(existsSync(join(app, 'dist', 'cmd', 'berth.js'))).toBe(true);
    expect(existsSync(join(app, 'dist', 'pkg', 'broker', 'pg', 'migrations', 'meta', '_journal.json'))).toBe(
      true,
    );
    const modules = readdirSync(join(app, 'node_modules'));
    expect(modules).toEqual(expect.arrayContaining(['hono', 'pg', 'selfsigned', '@kubernetes']));
    for (const dev of ['typescript', 'vitest', '@biomejs', 'node']) expect(modules).not.toContain(dev);
    // Root-owned and, where a link remains, pointing inside the image.
    for (const e of readdirSync(app, { recursive: true, withFileTypes: true })) {
      const p = join(e.parentPath, e.name);
      const st = lstatSync(p);
      expect(st.uid, p).toBe(0);
      if (e.isSymbolicLink()) {
        const target = posix.resolve(dirname(p), readlinkSync(p));
        expect(target.startsWith(`${fs}/`), `${p} → ${target}`).toBe(true);
      }
    }
    // The base: the pinned Node, its libraries at ldd's paths, users, /tmp, CA bundle.
    expect(sha256(readFileSync(join(fs, IMAGE_NODE)))).toBe(sha256(readFileSync(pinnedNode())));
    for (const lib of sharedLibraries(pinnedNode())) expect(existsSync(join(fs, lib)), lib).toBe(true);
    expect(readFileSync(join(fs, 'etc', 'passwd'), 'utf8')).toMatch(/^node:x:1000:1000:/m);
    expect(readFileSync(join(fs, 'etc', 'group'), 'utf8')).toMatch(/^node:x:1000:/m);
    expect(statSync(join(fs, 'tmp')).mode & 0o7777).toBe(0o1777);
    expect(readFileSync(join(fs, 'etc', 'ssl', 'certs', 'ca-certificates.crt'), 'utf8')).toContain(
      'BEGIN CERTIFICATE',
    );
  });

  it("the image's rootfs runs Berth as node (1000) with nothing from the host: --help and a live broker", async () => {
    const fs = rootfs(berth);
    const config = unpacked(berth).config();
    const env = Object.fromEntries(config.Env.map((e: string) => e.split(/=(.*)/s).slice(0, 2)));
    // As root, chroot into the rootfs under the image's user: PATH finds its node, ld.so its libraries.
    // Otherwise the image's own loader with only the image's library directories.
    const asImage = (argv: string[]): [string, string[]] =>
      process.getuid?.() === 0
        ? ['/usr/sbin/chroot', [`--userspec=${config.User}`, fs, ...argv]]
        : [
            join(fs, sharedLibraries(pinnedNode()).find((l) => /\/ld-/.test(l)) as string),
            [
              '--library-path',
              [...new Set(sharedLibraries(pinnedNode()).map((l) => join(fs, dirname(l))))].join(':'),
              join(fs, IMAGE_NODE),
              ...argv.slice(1).map((a) => (a.startsWith('/') ? join(fs, a) : a)),
            ],
          ];

    const [cmd, args] = asImage([...config.Entrypoint, ...config.Cmd]);
    const help = await run(cmd, args, { env });
    expect(help.stdout).toContain('Usage: berth');

    if (process.getuid?.() === 0) {
      const who = await run(
        ...asImage([
          'node',
          '-e',
          'require("dns").lookup("localhost", (e, a) => console.log(JSON.stringify({ u: require("os").userInfo(), e: e?.code, a, v: process.version, env: process.env.NODE_ENV })))',
        ]),
        { env },
      );
      const info = JSON.parse(who.stdout);
      expect(info).toMatchObject({
        u: { uid: 1000, gid: 1000, username: 'node', homedir: '/home/node' },
        a: '127.0.0.1',
      });
      expect(info.v).toBe(execFileSync(pinnedNode(), ['--version'], { encoding: 'utf8' }).trim());
      expect(info.env).toBe('production');
    }

    const [bcmd, bargs] = asImage([...config.Entrypoint, 'broker', '--port', '0']);
    const broker = spawnProcess(bcmd, bargs, { cwd: '/', env });
    try {
      const port = JSON.parse(await broker.waitForLine(/broker listening/, 30_000)).port;
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      broker.proc.kill('SIGTERM');
      expect(await broker.exited).toBe(0);
    } finally {
      if (broker.proc.exitCode === null) broker.proc.kill('SIGKILL');
    }
  });

  it('is deterministic: the same tree gives the same digests whatever its mtimes and umask', async () => {
    const tree = join(dir, 'det');
    mkdirSync(join(tree, 'a', 'b'), { recursive: true });
    writeFileSync(join(tree, 'a', 'b', 'f.txt'), 'x');
    writeFileSync(join(tree, 'a', 'run.sh'), '#!/bin/sh\n', { mode: 0o700 });
    const layer = () => writeLayer(directoryEntries(tree, 'opt/x'), dir);
    const first = await layer();
    utimesSync(join(tree, 'a', 'b', 'f.txt'), 12345, 12345);
    execFileSync('chmod', ['0640', join(tree, 'a', 'b', 'f.txt')]);
    execFileSync('chmod', ['0750', join(tree, 'a', 'run.sh')]);
    expect((await layer()).digest).toBe(first.digest);
    // gzip layers: the same diff_id, a digest of their own.
    const spec = { name: 'example.com/x/y:1', layers: [directoryEntries(tree, 'opt/x')], config: {} };
    const plain = await writeImageArchive(spec, join(dir, 'plain.tar'));
    const gz = await writeImageArchive({ ...spec, gzip: true }, join(dir, 'gz.tar'));
    expect(plain.name).toBe('example.com/x/y:1');
    expect(gz.layers[0]?.diffId).toBe(plain.layers[0]?.diffId);
    expect(gz.layers[0]?.mediaType).toBe('application/vnd.oci.image.layer.v1.tar+gzip');
    expect(gz.layers[0]?.digest).not.toBe(plain.layers[0]?.digest);
    const inArchive = await unpacked(gz).layer(gz.layers[0]?.digest as string, true);
    expect(inArchive).toEqual({
      digest: gz.layers[0]?.digest,
      size: gz.layers[0]?.size,
      diffId: plain.layers[0]?.diffId,
    });
    expect((await writeImageArchive(spec, join(dir, 'again.tar'))).manifest.digest).toBe(
      plain.manifest.digest,
    );
  });

  it('ctr images import (containerd, its own root, state and socket) takes both archives and tags them', async () => {
    for (const bin of ['containerd', 'ctr'])
      expect(
        execFileSync('sh', ['-c', `command -v ${bin} || true`], { encoding: 'utf8' }).trim(),
        `${bin}: run make node (hack/ensure-node-packages.sh installs containerd)`,
      ).not.toBe('');
    const state = join(dir, 'containerd');
    mkdirSync(state);
    const sock = join(state, 'containerd.sock');
    // No CRI (it would start networking) and no `opt` plugin (it creates /opt/containerd).
    writeFileSync(
      join(state, 'config.toml'),
      [
        'version = 2',
        `root = ${JSON.stringify(join(state, 'root'))}`,
        `state = ${JSON.stringify(join(state, 'state'))}`,
        'disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt"]',
        '[grpc]',
        `  address = ${JSON.stringify(sock)}`,
        '[ttrpc]',
        `  address = ${JSON.stringify(`${sock}.ttrpc`)}`,
        '[debug]',
        '  address = ""',
        '[metrics]',
        '  address = ""',
      ].join('\n'),
    );
    const ctr = (...args: string[]) =>
      run('ctr', ['--address', sock, '--namespace', 'k8s.io', ...args], { maxBuffer: 16 << 20 });
    let containerd: ChildProcess | undefined;
    try {
      containerd = spawn('containerd', ['--config', join(state, 'config.toml')], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let log = '';
      containerd.stderr?.on('data', (d: Buffer) => {
        log += d.toString();
      });
      const deadline = Date.now() + 20_000;
      for (;;) {
        if (containerd.exitCode !== null) throw new Error(`containerd exited: ${log}`);
        if (
          await ctr('version').then(
            () => true,
            () => false,
          )
        )
          break;
        if (Date.now() > deadline) throw new Error(`containerd did not answer: ${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      for (const a of [berth, pause]) {
        const { stdout } = await ctr('images', 'import', a.file);
        expect(stdout).toContain(`unpacking ${a.name} (${a.manifest.digest})...done`);
      }
      const names = (await ctr('images', 'ls', '-q')).stdout.trim().split('\n').sort();
      expect(names).toEqual(['docker.io/library/berth-pause:dev', 'docker.io/library/berth:dev']);
      // Every blob present and the layers unpacked (containerd checked each diff_id doing it).
      const check = (await ctr('images', 'check')).stdout;
      for (const a of [berth, pause])
        expect(check).toMatch(
          new RegExp(`${a.name}\\s.*${a.manifest.digest}\\s+complete \\((\\d+)/\\1\\).*\\strue\\s*$`, 'm'),
        );
    } finally {
      if (containerd && containerd.exitCode === null) {
        const exited = new Promise((r) => containerd?.once('exit', r));
        containerd.kill('SIGTERM');
        await exited;
      }
    }
  }, 120_000);
});
