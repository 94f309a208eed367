#!/usr/bin/env bash
# Builds kube-apiserver, kubectl (Kubernetes $KUBE_VERSION) and etcd ($ETCD_VERSION) from the Go module
# proxy and caches them outside the repo. Idempotent: when the binaries exist it returns at once.
# Prints the cache directory on its last line.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
BUILD_NAME=build-kube
# shellcheck source=hack/build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-lib.sh"
OUT="$CACHE_ROOT/kube-$KUBE_VERSION-etcd-$ETCD_VERSION"
BINARIES=(kube-apiserver kubectl etcd)

begin_build kube

build_kube() {
  local cmd
  [ -x "$OUT/kube-apiserver" ] && [ -x "$OUT/kubectl" ] && return 0
  kube_module "$WORK/kube" kube-apiserver kubectl
  for cmd in kube-apiserver kubectl; do
    [ -x "$OUT/$cmd" ] && continue
    log "the first build of $cmd takes 10-20 minutes on 2 cores"
    go_build "$OUT/$cmd" -ldflags "$(kube_ldflags)" "k8s.io/kubernetes/cmd/$cmd"
  done
}

build_etcd() {
  [ -x "$OUT/etcd" ] && return 0
  local dir="$WORK/etcd"
  mkdir -p "$dir" && cd "$dir"
  go mod init berth.dev/etcdbuild >/dev/null 2>&1
  cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  log "resolving etcd $ETCD_VERSION"
  quietly go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  quietly go mod tidy
  go_build "$OUT/etcd" -ldflags "-s -w" .
}

start=$SECONDS
build_etcd
build_kube
end_build
