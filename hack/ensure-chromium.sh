#!/usr/bin/env bash
# The dashboard's browser tests drive Debian's Chromium (/usr/bin/chromium) with playwright-core;
# no browser is downloaded by npm. Installs it with apt-get when it is missing (as root, else through
# sudo). Idempotent: returns at once when it is there. CHROMIUM overrides the path checked.
set -euo pipefail

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0

command -v apt-get >/dev/null || {
  echo "ensure-chromium: $CHROMIUM is missing and there is no apt-get: install Chromium there" >&2
  exit 1
}
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "ensure-chromium: run as root or install sudo to install chromium" >&2; exit 1; }
  SUDO="sudo"
fi
echo "ensure-chromium: installing Debian's chromium (browser tests of the dashboard)" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
[ -x "$CHROMIUM" ] || { echo "ensure-chromium: apt-get installed chromium but $CHROMIUM is not there" >&2; exit 1; }
