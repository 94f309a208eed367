/**
 * A tiny image for the node's smoke test: one static Go binary that serves HTTP (`serve PORT`: its
 * hostname, i.e. the pod's name, on `/`, and 200 on `/healthz`) or fetches a URL and prints the body
 * (`get URL [TRIES [TIMEOUT_SECONDS]]`, retrying; names resolve through the pod's resolv.conf). Built with the Go toolchain the node's
 * binaries need anyway; Go's build cache makes a rebuild take about a second.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeImageArchive } from '../../pkg/kube/oci-archive.ts';

const run = promisify(execFile);

export const SMOKE_IMAGE = 'berth-smoke:dev';

const SOURCE = `package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: smoke serve PORT | smoke get URL [TRIES [TIMEOUT_SECONDS]]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		host, _ := os.Hostname()
		http.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "hello from %s\\n", host) })
		if err := http.ListenAndServe(":"+os.Args[2], nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "get":
		tries, timeout := 20, 5
		if len(os.Args) > 3 {
			fmt.Sscan(os.Args[3], &tries)
		}
		if len(os.Args) > 4 {
			fmt.Sscan(os.Args[4], &timeout)
		}
		c := http.Client{Timeout: time.Duration(timeout) * time.Second}
		var last error
		for i := 0; i < tries; i++ {
			r, err := c.Get(os.Args[2])
			if err == nil {
				b, _ := io.ReadAll(r.Body)
				fmt.Printf("%d %s", r.StatusCode, b)
				return
			}
			last = err
			time.Sleep(500 * time.Millisecond)
		}
		fmt.Fprintln(os.Stderr, last)
		os.Exit(1)
	}
}
`;

/** Builds the binary and its image archive in `dir`; returns the archive's path. */
export async function buildSmokeImage(dir: string): Promise<string> {
  const src = join(dir, 'smoke-src');
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, 'go.mod'), 'module berth.dev/smoke\n\ngo 1.22\n');
  writeFileSync(join(src, 'main.go'), SOURCE);
  const bin = join(src, 'smoke');
  await run('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', bin, '.'], {
    cwd: src,
    env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
  });
  if (!existsSync(bin)) throw new Error('go build produced no smoke binary');
  const file = join(dir, 'smoke.tar');
  await writeImageArchive(
    {
      name: SMOKE_IMAGE,
      layers: [[{ path: 'smoke', type: 'file', mode: 0o755, uid: 0, gid: 0, source: bin }]],
      config: { Entrypoint: ['/smoke'], User: '65532:65532' },
    },
    file,
  );
  return file;
}
