#!/usr/bin/env bash
# Builds kube-apiserver, kubectl (Kubernetes $KUBE_VERSION) and etcd ($ETCD_VERSION) from the Go module
# proxy and caches them outside the repo. Idempotent: when the binaries exist it returns at once.
# Prints the cache directory on its last line.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
CACHE_ROOT="${BERTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/berth}"
OUT="$CACHE_ROOT/kube-$KUBE_VERSION-etcd-$ETCD_VERSION"
BINARIES=(kube-apiserver kubectl etcd)

have_all() {
  for b in "${BINARIES[@]}"; do [ -x "$OUT/$b" ] || return 1; done
}

if have_all; then
  echo "$OUT"
  exit 0
fi

command -v go >/dev/null || { echo "build-kube: Go is required for the first build (https://go.dev/dl)" >&2; exit 1; }

export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
mkdir -p "$OUT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/berth-kube-build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

log() { echo "build-kube: $*" >&2; }

build_kube() {
  local dir="$WORK/kube" staging minor
  mkdir -p "$dir" && cd "$dir"
  go mod init berth.dev/kubebuild >/dev/null 2>&1
  # k8s.io/kubernetes requires its staging modules at v0.0.0: replace each with the matching release.
  local gomod
  gomod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  minor="v0.${KUBE_VERSION#v1.}"
  staging="$(awk '/^require/,/^\)/' "$gomod" | awk '$1 ~ /^k8s.io\// && $2 == "v0.0.0" {print $1}')"
  for m in $staging; do go mod edit -replace="$m=$m@$minor"; done
  go mod edit -require="k8s.io/kubernetes@$KUBE_VERSION"
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  log "resolving k8s.io/kubernetes $KUBE_VERSION modules"
  go mod tidy >/dev/null 2>&1 || go get "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION" "k8s.io/kubernetes/cmd/kubectl@$KUBE_VERSION"
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
  for cmd in kube-apiserver kubectl; do
    [ -x "$OUT/$cmd" ] && continue
    log "building $cmd (the first build takes 10-20 minutes on 2 cores)"
    go build -trimpath -ldflags "$ldflags" -o "$OUT/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
    mv "$OUT/$cmd.tmp" "$OUT/$cmd"
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
  log "building etcd $ETCD_VERSION"
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1
  go mod tidy >/dev/null 2>&1
  go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" .
  mv "$OUT/etcd.tmp" "$OUT/etcd"
}

start=$(date +%s)
build_etcd
build_kube
have_all || { log "build finished but binaries are missing in $OUT"; exit 1; }
log "built in $(( $(date +%s) - start ))s"
echo "$OUT"
