#!/usr/bin/env bash
# flocksim developer entry point: sets up its own virtual environment, then
#   ./dev.sh demo    run the main job: serve the viewer on http://127.0.0.1:8000 (Ctrl-C stops)
#   ./dev.sh run ... the command line, e.g. ./dev.sh run starlings-2d --steps 3600
#   ./dev.sh test    lint (ruff, lint-imports) and run the whole test suite
#   ./dev.sh docs    serve the documentation site (MkDocs) on http://127.0.0.1:8001, rebuilt on edits
#   ./dev.sh setup   only create/refresh .venv
set -euo pipefail
cd "$(dirname "$0")"
VENV="${FLOCKSIM_VENV:-.venv}"
PY="${PYTHON:-python3}"

setup() {
  "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "flocksim needs Python >= 3.11")'
  stamp="$VENV/.flocksim-installed"
  if [ ! -x "$VENV/bin/python" ]; then
    if ! "$PY" -m venv "$VENV" 2>/dev/null; then
      # Debian's python3 ships venv/ensurepip separately
      rm -rf "$VENV"
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
      fi
      "$PY" -m venv "$VENV"
    fi
  fi
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements/constraints.txt -nt "$stamp" ]; then
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    # all: every extra (sweep, plot, video, field, notebook), so that every test runs; cuda: numba-cuda,
    # for the CUDA engine's tests in its simulator (no GPU needed)
    "$VENV/bin/python" -m pip install --quiet -c requirements/constraints.txt -e '.[dev,cuda,all]'
    touch "$stamp"
  fi
  build_web
  # the viewer's first scene: compile its numba kernels now rather than in front of the first
  # viewer (minutes after an install or an update; a no-op once done for these sources)
  "$VENV/bin/python" -m flocksim.viewer.warmup
}

# Debian packages, installed only where missing and only as root with apt (CI, fresh machines).
apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    echo "dev.sh: please install the Debian/Ubuntu packages: $*" >&2
    return 1
  fi
}

# The viewer's page: web/ (three.js, esbuild from npm, pinned by package-lock.json) bundled into
# src/flocksim/viewer/static/ (and the notebook widget's module into src/flocksim/notebook/static/).
# Rebuilt when a source is newer than the bundle.
build_web() {
  [ -f web/package.json ] || return 0
  command -v npm >/dev/null || apt_install nodejs npm
  if [ ! -d web/node_modules ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
    npm ci --prefix web --no-audit --no-fund --loglevel=error
  fi
  bundle=src/flocksim/viewer/static/index.html
  if [ ! -f "$bundle" ] || [ ! -f src/flocksim/notebook/static/widget.js ] || [ -n "$(find web/src web/index.html web/package.json web/build.mjs -newer "$bundle" 2>/dev/null | head -1)" ]; then
    npm run --prefix web --silent build
  fi
}

# The browser tests drive Debian's chromium (Playwright's own browser download is not used).
ensure_chromium() {
  [ -x /usr/bin/chromium ] || apt_install chromium || echo "dev.sh: no /usr/bin/chromium: the browser tests will be skipped" >&2
}

case "${1:-}" in
  setup)
    setup ;;
  demo)
    setup
    shift
    exec "$VENV/bin/flocksim" serve "$@" ;;
  run)
    setup
    shift
    exec "$VENV/bin/flocksim" run "$@" ;;
  docs)
    setup
    shift
    exec "$VENV/bin/mkdocs" serve --dev-addr 127.0.0.1:8001 "$@" ;;
  test)
    setup
    ensure_chromium
    "$VENV/bin/ruff" check .
    "$VENV/bin/ruff" format --check .
    "$VENV/bin/lint-imports" --no-cache   # the layer contracts of pyproject.toml ([tool.importlinter])
    npm test --prefix web --silent   # the page's JavaScript unit tests (node --test)
    shift
    # pytest-xdist: a worker process per core (at most 8; FLOCKSIM_TEST_WORKERS=0 runs in this process), each
    # test file's tests spread over them; the workers share the kernel cache and compile each kernel once
    workers="${FLOCKSIM_TEST_WORKERS:-$(nproc 2>/dev/null || echo 2)}"
    [ "$workers" -gt 8 ] && workers=8
    [ "$workers" -le 1 ] && workers=0   # one core: no worker processes
    "$VENV/bin/python" -m pytest -q -n "$workers" --dist worksteal "$@" ;;
  *)
    echo "usage: ./dev.sh demo [serve options] | run PRESET [options] | test [pytest args] | docs [mkdocs serve options] | setup" >&2
    exit 2 ;;
esac
