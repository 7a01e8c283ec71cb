#!/usr/bin/env bash
# flocksim developer entry point: sets up its own virtual environment, then
#   ./dev.sh demo    run the main job (a starling run that prints its summary)
#   ./dev.sh test    lint and run the whole test suite
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
    "$VENV/bin/python" -m pip install --quiet -c requirements/constraints.txt -e '.[dev]'
    touch "$stamp"
  fi
}

case "${1:-}" in
  setup)
    setup ;;
  demo)
    setup
    "$VENV/bin/flocksim" run starlings-2d --steps 3600 --seed 1 ;;
  test)
    setup
    "$VENV/bin/ruff" check .
    "$VENV/bin/ruff" format --check .
    shift
    "$VENV/bin/python" -m pytest -q "$@" ;;
  *)
    echo "usage: ./dev.sh demo | test [pytest args] | setup" >&2
    exit 2 ;;
esac
