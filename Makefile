# Two entry points: `make up` runs the platform locally, `make test` runs every check and test.
# Both install what they need: npm packages (pinned Node 24 included) and the kube binaries; `make
# test` also Debian's chromium for the dashboard's browser tests.
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

.PHONY: up up-node test test-cluster test-faults soak install kube node browser build lint typecheck crds check-crds bench clean

# npm runs on whatever Node the machine has; every script after it runs on the pinned Node 24.
# `npm install` (which follows package-lock.json) rather than `npm ci`: the registry this project
# builds from lacks the non-Linux optional binaries of some packages (e.g. @biomejs/cli-darwin-*),
# and `npm ci` refuses a lock without them while `npm install` skips them.
node_modules/.package-lock.json: package-lock.json package.json
	npm install --no-audit --no-fund --loglevel=error
	@touch $@

install: node_modules/.package-lock.json

kube:
	@bash hack/build-kube.sh >/dev/null

# A local node's binaries (kubelet, kube-proxy, scheduler, controller-manager, CoreDNS, kube-router, pause)
# and its Debian packages (containerd, runc, CNI plugins, iptables, ...): docs/cluster-tests.md.
node:
	@bash hack/ensure-node-packages.sh
	@bash hack/build-node.sh >/dev/null

browser:
	@bash hack/ensure-chromium.sh

up: install kube
	node hack/build-dashboard.ts
	node --max-semi-space-size=16 cmd/berth.ts up

# The platform as pods on a local node (root; containerd, kubelet, kube-proxy, CoreDNS on this host):
# manifests/base with the image built from this checkout. Ctrl-C puts the host back as it was.
up-node: install kube node
	node hack/up-node.ts

test: install kube browser node
	node hack/run-tests.ts

# The cluster suite alone: Berth as pods on a local node (docs/cluster-tests.md).
test-cluster: install kube node
	node hack/run-tests.ts test/cluster

# The fault, fuzz and security suites at full length (docs/reliability.md): 100,000 generated requests
# per service instead of 10,000, and the long fault variants (BERTH_FAULTS=long).
test-faults: install kube
	FUZZ_CASES=100000 BERTH_FAULTS=long node hack/run-tests.ts test/fuzz test/faults test/security

# 30 minutes of mixed load on `berth up`, RSS and descriptors sampled each minute (docs/reliability.md).
soak: install kube
	node test/soak/run.ts --minutes 30 --sample-seconds 60

build: install
	npm run build

lint: install
	npm run lint

typecheck: install
	npm run typecheck

crds: install
	npm run gen:crds

check-crds: install
	npm run check:crds

bench: install kube
	npm run bench

clean:
	rm -rf dist .berth .vitest-report.json
