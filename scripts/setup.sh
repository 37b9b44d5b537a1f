#!/usr/bin/env bash
# Sets up a fresh Debian machine for mcpvisor: the Debian packages it runs with (Chromium for web
# search, bubblewrap for the shell sandbox, procps for tree-kill, nginx for the scale-out test,
# xvfb for the visible-browser search test),
# the npm packages from package-lock.json, and the build. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v ps >/dev/null 2>&1 || need+=(procps)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing Debian packages: ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# puppeteer must never download a browser: Debian's Chromium is used.
export PUPPETEER_SKIP_DOWNLOAD=1
npm ci --no-audit --no-fund >&2
npm run build >&2
