#!/usr/bin/env bash
# Builds what a local Kubernetes node runs beside the control plane of hack/build-kube.sh, from the Go
# module proxy, and caches it outside the repo in $CACHE_ROOT/node-$KUBE_VERSION/:
#   pause                    the sandbox process (a static binary written here: blocks until SIGTERM or
#                            SIGINT, reaps orphans, exits 0)
#   kube-proxy kube-scheduler kube-controller-manager kubelet   (k8s.io/kubernetes $KUBE_VERSION)
#   coredns                  cluster DNS (github.com/coredns/coredns $COREDNS_VERSION)
#   kube-router              NetworkPolicy enforcement with iptables + ipset ($KUBE_ROUTER_VERSION)
# Each binary is built only when missing, so an interrupted build resumes where it stopped.
# Idempotent: when every binary exists it returns at once. Prints the cache directory on its last line.
# The Debian packages the node needs are hack/ensure-node-packages.sh's.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
# kube-router: v2.1.0 is the only version the module proxy serves here, and security flaws are reported
# against it. It is built for one job: enforcing NetworkPolicy on the throwaway test node (the cluster
# suite's tenant fences), never for a node that faces a network. Replace it when a fixed version is served.
KUBE_ROUTER_VERSION="${KUBE_ROUTER_VERSION:-v2.1.0}"
BUILD_NAME=build-node
# shellcheck source=hack/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-lib.sh"
OUT="$CACHE_ROOT/node-$KUBE_VERSION"
KUBE_BINARIES=(kube-proxy kube-scheduler kube-controller-manager kubelet)
BINARIES=(pause "${KUBE_BINARIES[@]}" coredns kube-router)

begin_build node

build_pause() {
  [ -x "$OUT/pause" ] && return 0
  mkdir -p "$WORK/pause" && cd "$WORK/pause"
  quietly go mod init berth.dev/pause
  cat > main.go <<'GO'
// pause is a pod sandbox's first process: it holds the pod's namespaces open, reaps orphaned children
// (it is PID 1 when the pod shares its process namespace) and exits 0 on SIGTERM or SIGINT.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const version = "berth-pause 1.0"

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "-v", "--version":
			fmt.Println(version)
			return
		case "-h", "--help":
			fmt.Println("usage: pause [--version]\nBlocks until SIGTERM or SIGINT, reaping orphaned children, then exits 0.")
			return
		default:
			fmt.Fprintf(os.Stderr, "pause: unknown argument %q\n", os.Args[1])
			os.Exit(2)
		}
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
GO
  go_build "$OUT/pause" -ldflags "-s -w" .
}

build_kube() {
  local b missing=()
  for b in "${KUBE_BINARIES[@]}"; do [ -x "$OUT/$b" ] || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  kube_module "$WORK/kube" "${KUBE_BINARIES[@]}"
  # kubelet last: the slowest (about 4 minutes cold on 2 cores), and it reuses the others' build cache.
  for b in "${missing[@]}"; do
    go_build "$OUT/$b" -ldflags "$(kube_ldflags)" "k8s.io/kubernetes/cmd/$b"
  done
}

build_coredns() {
  [ -x "$OUT/coredns" ] && return 0
  mkdir -p "$WORK/coredns" && cd "$WORK/coredns"
  quietly go mod init berth.dev/corednsbuild
  # CoreDNS's main package is its module root; its plugin set is the upstream default (core/plugin).
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/coredns/coredns"\n' > tools.go
  log "resolving github.com/coredns/coredns $COREDNS_VERSION"
  quietly go get "github.com/coredns/coredns@$COREDNS_VERSION"
  quietly go mod tidy
  go_build "$OUT/coredns" -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" github.com/coredns/coredns
}

build_kube_router() {
  [ -x "$OUT/kube-router" ] && return 0
  mkdir -p "$WORK/kube-router" && cd "$WORK/kube-router"
  quietly go mod init berth.dev/kuberouterbuild
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"\n' > tools.go
  log "resolving github.com/cloudnativelabs/kube-router/v2 $KUBE_ROUTER_VERSION"
  quietly go get "github.com/cloudnativelabs/kube-router/v2@$KUBE_ROUTER_VERSION"
  quietly go mod tidy
  local v=github.com/cloudnativelabs/kube-router/v2/pkg/version
  go_build "$OUT/kube-router" -ldflags "-s -w -X $v.Version=$KUBE_ROUTER_VERSION -X $v.BuildDate=module-proxy" \
    github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
}

start=$SECONDS
build_pause
build_kube
build_coredns
build_kube_router
end_build
