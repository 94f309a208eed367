#!/usr/bin/env bash
# The Debian packages a local Kubernetes node needs besides the binaries of hack/build-node.sh:
#   containerd runc containernetworking-plugins   the container runtime and the bridge/host-local/
#                                                 loopback CNI plugins (in /usr/lib/cni)
#   nftables                                      `nft`, which kube-proxy's nftables mode runs
#   iptables ipset                                kube-router's NetworkPolicy enforcement, the CNI
#                                                 bridge's masquerade rules, the kubelet's canary chains
#   conntrack                                     kube-proxy clears stale UDP (DNS) entries with it
#   ethtool kmod socat                            the kubelet's and kube-proxy's helpers (offload
#                                                 settings, modprobe, port-forward)
# Installs the missing ones with apt-get (as root, else through sudo), quietly and noninteractively,
# and prints each package it installed with its version. Idempotent: returns at once when all are
# there. The node starts its own containerd with its own config and socket: a system containerd
# service that the package may start where systemd runs is left alone and not used.
set -euo pipefail

PACKAGES=(containerd runc containernetworking-plugins nftables iptables ipset conntrack ethtool kmod socat)

installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }

missing=()
for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0

command -v apt-get >/dev/null || {
  echo "ensure-node-packages: ${missing[*]} missing and there is no apt-get: install them (Debian names)" >&2
  exit 1
}
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "ensure-node-packages: run as root or install sudo to install ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
echo "ensure-node-packages: installing ${missing[*]} (the local node's runtime and networking)" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for p in "${missing[@]}"; do
  installed "$p" || { echo "ensure-node-packages: apt-get ran but $p is not installed" >&2; exit 1; }
  echo "ensure-node-packages: installed $p $(dpkg-query -W -f='${Version}' "$p")" >&2
done
