#!/usr/bin/env bash
# Installs Debian's redis-server (and, with it, redis-tools' redis-cli, which
# joins the cluster tests' nodes) when either is not on PATH.
#
# Tests start their own redis-server (test/support/redis-server.ts) on a
# random loopback port, so only the binary matters: a service the package may
# start on 6379 is neither needed nor used. A fresh CI machine does not have
# the package, and whatever was installed by hand does not survive, so CI
# runs this every time; when the binary is there it does nothing.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
  echo "ensure-redis: $(redis-server --version)" >&2
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "ensure-redis: redis-server is missing; install it as root: apt-get install redis-server" >&2
    exit 1
  fi
  SUDO=(sudo)
fi

# Keep the package's service from starting: nothing uses it, and a daemon left
# on 6379 would only hold memory. Docker-style images already carry a
# policy-rc.d that refuses every start; add a temporary one only if missing.
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$POLICY" >/dev/null
  "${SUDO[@]}" chmod 755 "$POLICY"
  trap '"${SUDO[@]}" rm -f "$POLICY"' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
# A bounded wait for the dpkg lock, in case another apt run holds it.
APT=("${SUDO[@]}" apt-get -q -o DPkg::Lock::Timeout=300)
"${APT[@]}" update
"${APT[@]}" install -y --no-install-recommends redis-server redis-tools

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  echo "ensure-redis: redis-server or redis-cli installed but not on PATH ($PATH)" >&2
  exit 1
fi
echo "ensure-redis: $(redis-server --version)" >&2
