# shellcheck shell=bash
# Shared by hack/build-kube.sh and hack/build-node.sh (sourced, not run): the cache root, the Go build
# environment, the k8s.io/kubernetes module recipe and an atomic, timed `go build`.
# The sourcing script sets BUILD_NAME (its log prefix) and, for kube_module, KUBE_VERSION.

# Binaries are cached outside the repo, shared by every clone: BERTH_CACHE_DIR overrides the root.
CACHE_ROOT="${BERTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/berth}"

log() { echo "${BUILD_NAME:-build}: $*" >&2; }

# quietly CMD...: runs CMD with its output kept back, shown only when it fails.
quietly() {
  local out
  out="$("$@" 2>&1)" || { echo "$out" >&2; log "failed: $*"; return 1; }
}

# Static binaries from the local toolchain only; modules resolve from the module proxy.
go_env() {
  command -v go >/dev/null || { log "Go is required for the first build (https://go.dev/dl)"; exit 1; }
  export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
}

# go_build OUT_FILE [go build args...]: builds to OUT_FILE.tmp and renames it, so a killed build never
# leaves a half binary under the final name; logs what it builds and how long it took.
go_build() {
  local out="$1" start=$SECONDS
  shift
  log "building $(basename "$out")"
  go build -trimpath -o "$out.tmp" "$@"
  mv "$out.tmp" "$out"
  log "built $(basename "$out") in $((SECONDS - start))s ($(du -h "$out" | cut -f1))"
}

# The version stamps `kubectl version` / `--version` read, as the release build sets them.
kube_ldflags() {
  echo "-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
}

# kube_module DIR CMD...: makes DIR a Go module that builds k8s.io/kubernetes/cmd/CMD at $KUBE_VERSION
# and cds into it. k8s.io/kubernetes requires its staging modules at v0.0.0: each is replaced with the
# matching release (v0.<minor>.<patch>).
kube_module() {
  local dir="$1" gomod minor staging m
  shift
  mkdir -p "$dir" && cd "$dir"
  go mod init berth.dev/kubebuild >/dev/null 2>&1
  gomod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  minor="v0.${KUBE_VERSION#v1.}"
  staging="$(awk '/^require/,/^\)/' "$gomod" | awk '$1 ~ /^k8s.io\// && $2 == "v0.0.0" {print $1}')"
  for m in $staging; do go mod edit -replace="$m=$m@$minor"; done
  go mod edit -require="k8s.io/kubernetes@$KUBE_VERSION"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for m in "$@"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$m"; done
    printf ')\n'
  } > tools.go
  log "resolving k8s.io/kubernetes $KUBE_VERSION modules"
  local pkgs=()
  for m in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$m@$KUBE_VERSION"); done
  go mod tidy >/dev/null 2>&1 || go get "${pkgs[@]}"
}

# have_all: whether every binary of $BINARIES is in $OUT.
have_all() {
  local b
  for b in "${BINARIES[@]}"; do [ -x "$OUT/$b" ] || return 1; done
}

# begin_build NAME: prints $OUT and exits when every binary of $BINARIES is there; otherwise prepares
# the Go environment, takes the cache directory's lock (a second caller — `make` beside a test's
# global setup — waits, then finds the binaries there and returns), and makes $WORK, removed on exit.
begin_build() {
  if have_all; then
    echo "$OUT"
    exit 0
  fi
  go_env
  mkdir -p "$OUT"
  if command -v flock >/dev/null; then
    exec 9>"$OUT/.lock"
    flock 9
    if have_all; then
      echo "$OUT"
      exit 0
    fi
  fi
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/berth-$1-build.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
}

# end_build: checks every binary is there and prints $OUT (the scripts' last line).
end_build() {
  have_all || { log "build finished but binaries are missing in $OUT"; exit 1; }
  log "built in $((SECONDS - start))s"
  echo "$OUT"
}
