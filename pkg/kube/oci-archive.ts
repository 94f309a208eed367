/**
 * OCI image archives without docker or a registry: file trees become tar layers, a config and a
 * manifest point at them by digest, and one archive holds it all in the OCI image layout (with a
 * docker-style `manifest.json` beside it) — what `ctr images import`, `docker load` and `podman
 * load` accept. The reference name rides in the index annotations, so the import tags the image.
 *
 * Deterministic: entries are sorted, owners and modes are explicit, every mtime is `mtime` (default
 * SOURCE_DATE_EPOCH or 0), so the same tree gives the same digests.
 */
import { createHash, type Hash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

export interface FileEntry {
  /** Path inside the image, relative (`usr/local/bin/node`), no leading or trailing slash. */
  path: string;
  type: 'file' | 'dir' | 'symlink';
  /** Permission bits (sticky/setuid included), e.g. 0o755, 0o1777. */
  mode: number;
  uid: number;
  gid: number;
  /** A regular file's content: a host file… */
  source?: string;
  /** …or bytes. */
  data?: Uint8Array;
  /** A symlink's target. */
  linkname?: string;
}

export interface ImageConfig {
  User?: string;
  ExposedPorts?: Record<string, Record<string, never>>;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  Labels?: Record<string, string>;
  StopSignal?: string;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string };
}

export interface Layer extends Descriptor {
  /** sha256 of the uncompressed tar: the config's `rootfs.diff_ids` entry. */
  diffId: string;
  /** Where the blob is staged on disk. */
  file: string;
}

export interface ImageArchive {
  file: string;
  /** The full reference the import creates, e.g. `docker.io/library/berth:dev`. */
  name: string;
  manifest: Descriptor;
  config: Descriptor;
  layers: Omit<Layer, 'file'>[];
  /** The archive's size in bytes. */
  size: number;
}

export const MEDIA = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar',
  layerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

export const defaultMtime = (): number => Number(process.env.SOURCE_DATE_EPOCH ?? 0);

/** `berth:dev` → `docker.io/library/berth:dev`: the name containerd stores and the kubelet looks up. */
export function normalizeReference(ref: string): string {
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  let full = ref;
  if (slash < 0) full = `docker.io/library/${ref}`;
  else if (!first.includes('.') && !first.includes(':') && first !== 'localhost') full = `docker.io/${ref}`;
  const last = full.slice(full.lastIndexOf('/') + 1);
  return last.includes(':') || last.includes('@') ? full : `${full}:latest`;
}

/** The tag of a reference (`dev` for `berth:dev`), for the OCI `ref.name` annotation. */
function tagOf(ref: string): string {
  const last = ref.slice(ref.lastIndexOf('/') + 1);
  return last.includes(':') ? last.slice(last.indexOf(':') + 1) : 'latest';
}

const GO_ARCH: Record<string, string> = {
  x64: 'amd64',
  arm64: 'arm64',
  arm: 'arm',
  ppc64: 'ppc64le',
  s390x: 's390x',
};
/** Node's `process.arch` as an image config's `architecture`. */
export const goArch = (arch: string = process.arch): string => GO_ARCH[arch] ?? arch;

/**
 * A host directory as entries under `prefix` (symlinks kept as symlinks, not followed). Modes are
 * normalised — directories 0755, files 0755 when any execute bit is set, 0644 otherwise — and owners
 * are `uid`/`gid` (root by default), so that a checkout's umask or owner does not change the digest.
 */
export function directoryEntries(dir: string, prefix: string, owner = { uid: 0, gid: 0 }): FileEntry[] {
  const entries: FileEntry[] = [{ path: prefix, type: 'dir', mode: 0o755, ...owner }];
  for (const d of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const host = join(d.parentPath, d.name);
    const path = posix.join(
      prefix,
      host
        .slice(dir.length + 1)
        .split('/')
        .join('/'),
    );
    const st = lstatSync(host);
    if (st.isDirectory()) entries.push({ path, type: 'dir', mode: 0o755, ...owner });
    else if (st.isSymbolicLink()) {
      const linkname = readlinkSync(host);
      if (posix.isAbsolute(linkname))
        throw new Error(`${host}: absolute symlink to ${linkname} would dangle in the image`);
      entries.push({ path, type: 'symlink', mode: 0o777, linkname, ...owner });
    } else if (st.isFile())
      entries.push({ path, type: 'file', mode: st.mode & 0o111 ? 0o755 : 0o644, source: host, ...owner });
    else throw new Error(`${host}: neither a file, a directory nor a symlink`);
  }
  return entries;
}

/**
 * Sorted, with every missing parent directory added (root-owned, 0755). Two entries for one path
 * are refused unless both are directories with the same owner and mode.
 */
export function normalizeEntries(entries: FileEntry[]): FileEntry[] {
  const byPath = new Map<string, FileEntry>();
  const add = (e: FileEntry) => {
    const path = e.path.replace(/^\/+|\/+$/g, '');
    if (!path || path.split('/').some((s) => s === '..' || s === '.' || s === ''))
      throw new Error(`bad path in layer: ${JSON.stringify(e.path)}`);
    const prev = byPath.get(path);
    if (prev) {
      const same = prev.type === 'dir' && e.type === 'dir' && prev.mode === e.mode && prev.uid === e.uid;
      if (!same) throw new Error(`two entries for ${path} in one layer`);
      return;
    }
    byPath.set(path, { ...e, path });
  };
  for (const e of entries) add(e);
  for (const path of [...byPath.keys()]) {
    for (let p = posix.dirname(path); p !== '.'; p = posix.dirname(p))
      if (!byPath.has(p)) byPath.set(p, { path: p, type: 'dir', mode: 0o755, uid: 0, gid: 0 });
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

// --- tar (POSIX ustar, with pax headers for long or non-ASCII names) ---

const BLOCK = 512;

function octal(buf: Buffer, offset: number, width: number, value: number): void {
  buf.write(`${value.toString(8).padStart(width - 1, '0')}\0`, offset, width, 'ascii');
}

function header(
  name: string,
  type: string,
  o: {
    mode: number;
    uid: number;
    gid: number;
    size: number;
    mtime: number;
    linkname?: string;
    prefix?: string;
  },
): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, o.mode & 0o7777);
  octal(h, 108, 8, o.uid);
  octal(h, 116, 8, o.gid);
  octal(h, 124, 12, o.size);
  octal(h, 136, 12, o.mtime);
  h.write('        ', 148, 8, 'ascii'); // checksum placeholder
  h.write(type, 156, 1, 'ascii');
  if (o.linkname) h.write(o.linkname, 157, 100, 'utf8');
  h.write('ustar\u000000', 257, 8, 'ascii');
  octal(h, 329, 8, 0);
  octal(h, 337, 8, 0);
  if (o.prefix) h.write(o.prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

/** `<len> key=value\n` with len counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body);
  while (String(len).length + Buffer.byteLength(body) !== len)
    len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

const ascii = (s: string) => /^[\x20-\x7e]*$/.test(s);

/** Splits a long path into ustar's prefix (≤155) and name (≤100), or undefined. */
function splitName(path: string): { prefix: string; name: string } | undefined {
  if (path.length <= 100) return { prefix: '', name: path };
  for (let i = path.indexOf('/'); i > 0; i = path.indexOf('/', i + 1)) {
    if (i > 155) break;
    if (path.length - i - 1 <= 100 && path.length - i - 1 > 0)
      return { prefix: path.slice(0, i), name: path.slice(i + 1) };
  }
  return undefined;
}

const pad = (n: number) => Buffer.alloc((BLOCK - (n % BLOCK)) % BLOCK);

function entrySize(e: FileEntry): number {
  if (e.type !== 'file') return 0;
  if (e.data) return e.data.length;
  if (!e.source) throw new Error(`${e.path}: a file needs source or data`);
  return lstatSync(e.source).size;
}

/** Files up to this size are read whole; larger ones are streamed. */
const SMALL_FILE = 4 << 20;
/** Small pieces are gathered into chunks of about this size before they are passed on. */
const CHUNK = 1 << 20;

/** The tar stream of `entries` (already normalised), ending with the two zero blocks. */
export async function* tarStream(entries: FileEntry[], mtime = defaultMtime()): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const push = (b: Buffer) => {
    pending.push(b);
    pendingBytes += b.length;
  };
  const take = () => {
    const out = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    return out;
  };
  for (const e of entries) {
    const path = e.type === 'dir' ? `${e.path}/` : e.path;
    const size = entrySize(e);
    const type = { file: '0', dir: '5', symlink: '2' }[e.type];
    const linkname = e.linkname ?? '';
    const split = ascii(path) ? splitName(path) : undefined;
    const longLink = linkname.length > 100 || !ascii(linkname);
    if (!split || longLink) {
      const pax = Buffer.from(
        (split ? '' : paxRecord('path', path)) + (longLink ? paxRecord('linkpath', linkname) : ''),
        'utf8',
      );
      const paxName = `PaxHeaders/${basename(e.path)}`.slice(0, 100).replace(/[^\x20-\x7e]/g, '_');
      push(header(paxName, 'x', { mode: 0o644, uid: 0, gid: 0, size: pax.length, mtime }));
      push(pax);
      push(pad(pax.length));
    }
    const name = split?.name ?? path.slice(-100).replace(/[^\x20-\x7e]/g, '_');
    push(
      header(name, type, {
        mode: e.mode,
        uid: e.uid,
        gid: e.gid,
        size,
        mtime,
        linkname: longLink ? linkname.slice(0, 100).replace(/[^\x20-\x7e]/g, '_') : linkname,
        prefix: split?.prefix ?? '',
      }),
    );
    if (e.type === 'file') {
      let read = 0;
      if (e.data) {
        push(Buffer.from(e.data));
        read = e.data.length;
      } else if (size <= SMALL_FILE) {
        const content = readFileSync(e.source as string);
        push(content);
        read = content.length;
      } else {
        yield take();
        for await (const chunk of createReadStream(e.source as string, { highWaterMark: CHUNK })) {
          read += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
      }
      if (read !== size) throw new Error(`${e.source} changed while it was archived`);
      push(pad(size));
    }
    if (pendingBytes >= CHUNK) yield take();
  }
  push(Buffer.alloc(2 * BLOCK));
  yield take();
}

class HashTap extends Transform {
  readonly hash: Hash = createHash('sha256');
  bytes = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    cb(null, chunk);
  }
  digest(): string {
    return `sha256:${this.hash.digest('hex')}`;
  }
}

/** Writes a tar of `entries` to `file`; `digest` is the sha256 of the file's bytes. */
export async function writeTar(
  entries: FileEntry[],
  file: string,
  mtime = defaultMtime(),
): Promise<{ digest: string; size: number }> {
  const tap = new HashTap();
  await pipeline(Readable.from(tarStream(normalizeEntries(entries), mtime)), tap, createWriteStream(file));
  return { digest: tap.digest(), size: tap.bytes };
}

/**
 * A layer blob in `dir`, named by its digest: uncompressed tar, or gzip (level 1: a third of the
 * size at a tenth of level 9's time; no name or mtime in its header, so deterministic too).
 */
export async function writeLayer(
  entries: FileEntry[],
  dir: string,
  opts: { gzip?: boolean; mtime?: number } = {},
): Promise<Layer> {
  const tmp = join(dir, `layer-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const raw = new HashTap();
  const packed = new HashTap();
  const source = Readable.from(tarStream(normalizeEntries(entries), opts.mtime ?? defaultMtime()));
  if (opts.gzip) await pipeline(source, raw, createGzip({ level: 1 }), packed, createWriteStream(tmp));
  else await pipeline(source, raw, packed, createWriteStream(tmp));
  const digest = packed.digest();
  const file = join(dir, digest.slice('sha256:'.length));
  renameSync(tmp, file);
  return {
    mediaType: opts.gzip ? MEDIA.layerGzip : MEDIA.layer,
    digest,
    size: packed.bytes,
    diffId: raw.digest(),
    file,
  };
}

const jsonBlob = (value: unknown) => {
  const data = Buffer.from(JSON.stringify(value));
  return { data, digest: `sha256:${createHash('sha256').update(data).digest('hex')}`, size: data.length };
};

export interface ImageSpec {
  /** e.g. `berth:dev`; stored as its normalised form (`docker.io/library/berth:dev`). */
  name: string;
  /** Each layer's entries, bottom first. */
  layers: FileEntry[][];
  config: ImageConfig;
  /**
   * gzip the layers: about a quarter of the size; containerd imports them faster from disk (less to
   * write to its content store) though slower from a tmpfs. Default uncompressed.
   */
  gzip?: boolean;
  mtime?: number;
  /** One `history` line per layer (`created_by`). */
  history?: string[];
  architecture?: string;
}

/**
 * Writes `spec` as one archive at `file`: `oci-layout`, `index.json` (the manifest annotated with
 * `io.containerd.image.name` and `org.opencontainers.image.ref.name`), `manifest.json` (docker
 * archive: RepoTags) and `blobs/sha256/*`.
 */
export async function writeImageArchive(spec: ImageSpec, file: string): Promise<ImageArchive> {
  const staging = mkdtempSync(join(dirname(file), `.${basename(file)}-`));
  try {
    const mtime = spec.mtime ?? defaultMtime();
    const layers: Layer[] = [];
    for (const entries of spec.layers)
      layers.push(await writeLayer(entries, staging, { gzip: spec.gzip, mtime }));
    const created = new Date(mtime * 1000).toISOString().replace('.000Z', 'Z');
    const config = jsonBlob({
      created,
      architecture: spec.architecture ?? goArch(),
      os: 'linux',
      config: spec.config,
      rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
      history: layers.map((_, i) => ({
        created,
        created_by: spec.history?.[i] ?? `berth hack/oci.ts layer ${i}`,
      })),
    });
    const manifest = jsonBlob({
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: { mediaType: MEDIA.config, digest: config.digest, size: config.size },
      layers: layers.map(({ mediaType, digest, size }) => ({ mediaType, digest, size })),
    });
    const name = normalizeReference(spec.name);
    const manifestDesc: Descriptor = {
      mediaType: MEDIA.manifest,
      digest: manifest.digest,
      size: manifest.size,
      annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': tagOf(name) },
    };
    const index = jsonBlob({ schemaVersion: 2, mediaType: MEDIA.index, manifests: [manifestDesc] });
    const blob = (digest: string) => `blobs/sha256/${digest.slice('sha256:'.length)}`;
    const docker = jsonBlob([
      { Config: blob(config.digest), RepoTags: [spec.name], Layers: layers.map((l) => blob(l.digest)) },
    ]);
    const root = { mode: 0o644, uid: 0, gid: 0, type: 'file' as const };
    const entries: FileEntry[] = [
      { path: 'oci-layout', data: Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })), ...root },
      { path: 'index.json', data: index.data, ...root },
      { path: 'manifest.json', data: docker.data, ...root },
      { path: blob(config.digest), data: config.data, ...root },
      { path: blob(manifest.digest), data: manifest.data, ...root },
      ...layers
        .filter((l, i) => layers.findIndex((m) => m.digest === l.digest) === i)
        .map((l) => ({ path: blob(l.digest), source: l.file, ...root })),
    ];
    const tmp = join(staging, 'archive.tar');
    const { size } = await writeTar(entries, tmp, mtime);
    renameSync(tmp, file);
    return {
      file,
      name,
      manifest: { mediaType: MEDIA.manifest, digest: manifest.digest, size: manifest.size },
      config: { mediaType: MEDIA.config, digest: config.digest, size: config.size },
      layers: layers.map(({ file: _f, ...l }) => l),
      size,
    };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
