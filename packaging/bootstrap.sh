#!/usr/bin/env bash
# Set up curveeditor on a fresh Debian 12 machine, then run it or its test suite.
#
#   bash packaging/bootstrap.sh run    # install, then open the demo clip (GUI; CLI inspect when no GUI/display)
#   bash packaging/bootstrap.sh test   # install with the test, dev, cluster and fbx extras (.ci/run then lints
#                                      # and runs the whole suite: `bash .ci/run` is the test command; the
#                                      # cluster extra, Dask, lets the batch tests start a real scheduler;
#                                      # the fbx extra builds pufbx from source: a C compiler, ~3 min once),
#                                      # plus Node.js and Khronos' glTF-Validator (npm) for the glTF tests
#
# Needs root or sudo only when Debian packages are missing (checked with dpkg-query first, so a second
# run is fast). The Python environment is ./.venv; pip runs only when pyproject.toml changed since the
# last successful install for that mode. Exit status: the editor's for `run`, 0 after installing for `test`.
set -euo pipefail

MODE="${1:-run}"
case "$MODE" in
  run | test) ;;
  *)
    echo "usage: bash packaging/bootstrap.sh [run|test]" >&2
    exit 2
    ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { echo "bootstrap: $*" >&2; }

# --- Debian packages: Python, and what Qt's xcb platform, OpenGL and Xvfb need (shared/domain/stack.md).
APT_PACKAGES=(
  python3 python3-venv python3-pip
  libgl1 libegl1 libglib2.0-0 libfontconfig1 libdbus-1-3 libxkbcommon0 libxkbcommon-x11-0
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-shape0
  libxcb-xkb1 xvfb xauth
)
# Test mode only: the fbx extra (pufbx) builds a C extension; the glTF tests run Khronos' validator
# (npm package gltf-validator) under Node.js.
if [ "$MODE" = test ]; then
  APT_PACKAGES+=(gcc python3-dev)
  command -v node >/dev/null 2>&1 || APT_PACKAGES+=(nodejs)
  command -v npm >/dev/null 2>&1 || APT_PACKAGES+=(npm)
fi

# The test suite also opens the batch review page in a real browser (tests/test_review_page.py).
if [ "$MODE" = test ]; then
  APT_PACKAGES+=(chromium)
fi

missing_packages() {
  local installed
  installed="$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${APT_PACKAGES[@]}" 2>/dev/null \
    | awk '$2 ~ /^ii/ {print $1}' | sed 's/:.*//' | sort -u || true)"
  local p
  for p in "${APT_PACKAGES[@]}"; do
    grep -qx -- "$p" <<<"$installed" || echo "$p"
  done
}

install_debian_packages() {
  local missing
  mapfile -t missing < <(missing_packages)
  if [ "${#missing[@]}" -eq 0 ]; then
    log "Debian packages already installed"
    return
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      log "missing Debian packages (${missing[*]}) and not root, no sudo: install them as root first"
      exit 1
    fi
  fi
  log "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y \
    --no-install-recommends "${missing[@]}"
}

# --- Python environment.
setup_venv() {
  if ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
    log "creating .venv"
    rm -rf .venv
    python3 -m venv .venv
  fi
  local extras="" stamp
  [ "$MODE" = test ] && extras="[test,dev,cluster,fbx]"
  stamp=".venv/.bootstrap-$MODE"
  local want
  want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && .venv/bin/python -c 'import curveeditor' 2>/dev/null; then
    log "Python packages up to date (pyproject.toml unchanged)"
    return
  fi
  log "installing curveeditor${extras} into .venv"
  .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off -e ".${extras}"
  echo "$want" >"$stamp"
}

run_app() {
  # resources/samples is a symlink to the package data curveeditor/resources/samples.
  local sample=curveeditor/resources/samples/demo.anim
  [ -f "$sample" ] || sample=curveeditor/resources/samples/demo.csv
  if [ -x .venv/bin/curveeditor ] && .venv/bin/python -c \
    'import importlib.util, sys; sys.exit(importlib.util.find_spec("curveeditor.app.main") is None)' 2>/dev/null; then
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      log "starting the editor on $sample"
      exec .venv/bin/curveeditor "$sample"
    fi
    log "no display (DISPLAY is not set): showing the command-line inspection instead"
  fi
  exec .venv/bin/curveeditor-cli inspect curveeditor/resources/samples/demo.csv
}

# --- Test mode: Khronos glTF-Validator (npm) in .venv/node, where tests/io/gltf_validator.py finds it.
GLTF_VALIDATOR_VERSION=2.0.0-dev.3.10
setup_gltf_validator() {
  local pkg=.venv/node/node_modules/gltf-validator/package.json
  if [ -f "$pkg" ] && grep -q "\"version\": \"$GLTF_VALIDATOR_VERSION\"" "$pkg"; then
    log "glTF-Validator $GLTF_VALIDATOR_VERSION already installed"
    return
  fi
  log "installing glTF-Validator $GLTF_VALIDATOR_VERSION (npm) into .venv/node"
  npm install --prefix .venv/node --no-audit --no-fund --loglevel=error "gltf-validator@$GLTF_VALIDATOR_VERSION" >&2
}

install_debian_packages
setup_venv
if [ "$MODE" = test ]; then
  setup_gltf_validator
fi
if [ "$MODE" = run ]; then
  run_app
fi
