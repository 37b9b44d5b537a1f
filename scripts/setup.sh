#!/usr/bin/env bash
# Sets up a fresh Debian machine for mcpvisor: the Debian packages it runs with (Chromium for web
# search, bubblewrap for the shell sandbox, procps for tree-kill, nginx for the scale-out test,
# xvfb for the visible-browser search test),
# the npm packages from package-lock.json, and the build. Safe to run again. Node.js and npm must be
# there already (below).
set -euo pipefail
cd "$(dirname "$0")/.."

# Node.js and npm are not installed here: package.json's engines needs a Node newer than some
# Debian releases ship (Debian 12 has 18), and a setup that installed an older one would fail later,
# inside npm ci or at the first start. Checked first, so that nothing is installed for a run that
# cannot finish.
wanted=$(sed -n 's/.*"node": *">=\([0-9.]*\)".*/\1/p' package.json)
found=$(node --version 2>/dev/null | sed 's/^v//' || true)
oldest=$(printf '%s\n%s\n' "$wanted" "${found:-0}" | sort -V | head -n 1)
if [ -z "$found" ] || [ "$oldest" != "$wanted" ] || ! command -v npm >/dev/null 2>&1; then
  echo "setup: Node.js $wanted or later, with npm, is needed (found: node ${found:-none}, npm $(command -v npm >/dev/null 2>&1 && echo present || echo none))." >&2
  echo "setup: Debian 13: apt-get install nodejs npm. Debian 12 ships Node 18: install Node 20 from NodeSource (its nodejs package), then run this again." >&2
  exit 1
fi

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v ps >/dev/null 2>&1 || need+=(procps)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "setup: the Debian packages ${need[*]} are missing, and installing them needs root: run this as root, or install them first (apt-get install ${need[*]})." >&2
      exit 1
    fi
    sudo="sudo"
  fi
  echo "setup: installing Debian packages: ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# puppeteer must never download a browser: Debian's Chromium is used.
export PUPPETEER_SKIP_DOWNLOAD=1
npm ci --no-audit --no-fund >&2
npm run build >&2
