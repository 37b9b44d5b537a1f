#!/usr/bin/env bash
# Sets up a fresh Debian machine for mcpvisor: the Debian packages it runs with (Chromium for web
# search, bubblewrap for the shell sandbox, procps for tree-kill, nginx for the scale-out test,
# xvfb for the visible-browser search test, faketime for the tests that step the wall clock),
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
command -v faketime >/dev/null 2>&1 || need+=(faketime)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "setup: the Debian packages ${need[*]} are missing, and installing them needs root: run this as root, or install them first (apt-get install ${need[*]})." >&2
      exit 1
    fi
    sudo="sudo"
  fi
  # Without apt-get (not Debian, or an image without it) bash said only "apt-get: command not
  # found"; a failed update or install left apt's last line alone, without the packages' names.
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: the Debian packages ${need[*]} are missing and there is no apt-get here to install them: install them (or your system's packages of the same programs: chromium, bwrap, ps, nginx, Xvfb, libfaketime) first, then run this again." >&2
    exit 1
  fi
  echo "setup: installing Debian packages: ${need[*]}" >&2
  if ! $sudo apt-get update -qq; then
    echo "setup: apt-get update failed (above): the Debian mirrors must be reachable to install ${need[*]}; or install them first, then run this again." >&2
    exit 1
  fi
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2; then
    echo "setup: apt-get could not install ${need[*]} (its message is above): install them first, then run this again." >&2
    exit 1
  fi
fi

# npm ci downloads from the npm registry and nothing else: puppeteer must never download a
# browser (Debian's Chromium is used; puppeteer is puppeteer-core, see package.json's
# overrides), and swagger-client's dependency @scarf/scarf must not report the install to
# scarf.sh from its postinstall (package.json's scarfSettings says so too).
export PUPPETEER_SKIP_DOWNLOAD=1
export SCARF_ANALYTICS=false
npm ci --no-audit --no-fund >&2
npm run build >&2
