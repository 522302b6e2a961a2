#!/usr/bin/env bash
# Idempotent setup shared by scripts/demo.sh and scripts/test.sh:
#   Java 17+, the Debian JDBC driver jars, a virtual environment with requirements.txt and snaprepl.
# Source it (". scripts/setup.sh"); it exports what the other scripts need and leaves the caller's
# shell options as they were.
# Options the caller had off are switched off again at the end. Read them without a subshell: bash
# clears errexit inside $(...), so "$(set +o)" would turn the caller's -e off.
_snaprepl_restore=""
shopt -qo errexit || _snaprepl_restore+="set +e;"
shopt -qo nounset || _snaprepl_restore+="set +u;"
shopt -qo pipefail || _snaprepl_restore+="set +o pipefail;"
set -euo pipefail

SNAPREPL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export SNAPREPL_ROOT
VENV="${SNAPREPL_VENV:-$SNAPREPL_ROOT/.venv}"
PYTHON_BIN="${PYTHON:-python3}"

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root to run: $*"; fi
}

# --- Java 17+ -----------------------------------------------------------------------------------
java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1; }
if ! command -v java >/dev/null || [ "$(java_major)" -lt 17 ]; then
  die "Java 17 or newer is required by Spark 4 (found: $(java -version 2>&1 | head -n1 || echo none)); install e.g. openjdk-17-jre-headless"
fi
if [ -z "${JAVA_HOME:-}" ]; then
  JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
  export JAVA_HOME
fi

# --- JDBC driver jars and build dependencies from Debian ----------------------------------------
need_pkgs=()
[ -e /usr/share/java/postgresql.jar ] || need_pkgs+=(libpostgresql-jdbc-java)
[ -e /usr/share/java/mariadb-java-client.jar ] || need_pkgs+=(libmariadb-java)
[ -e /usr/share/java/sqlite-jdbc.jar ] || need_pkgs+=(libxerial-sqlite-jdbc-java)
command -v docker-compose >/dev/null || need_pkgs+=(docker-compose)
# The mysql provider's mysqlclient is built from source against MariaDB's client library.
command -v pkg-config >/dev/null || need_pkgs+=(pkg-config)
command -v gcc >/dev/null || need_pkgs+=(gcc)
pkg-config --exists libmariadb 2>/dev/null || need_pkgs+=(libmariadb-dev)
if [ "${#need_pkgs[@]}" -gt 0 ]; then
  say "installing ${need_pkgs[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y -q "${need_pkgs[@]}" >/dev/null 2>&1 \
    || { as_root apt-get update -q >/dev/null && as_root apt-get install -y -q "${need_pkgs[@]}" >/dev/null; } \
    || die "could not install ${need_pkgs[*]}; install them with apt-get"
fi

# --- the Replication page's browser test: headless Chromium and its driver from Debian -----------
browser_pkgs=()
command -v chromium >/dev/null || browser_pkgs+=(chromium)
command -v chromedriver >/dev/null || browser_pkgs+=(chromium-driver)
if [ "${#browser_pkgs[@]}" -gt 0 ]; then
  say "installing ${browser_pkgs[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y -q "${browser_pkgs[@]}" >/dev/null 2>&1 \
    || { as_root apt-get update -q >/dev/null && as_root apt-get install -y -q "${browser_pkgs[@]}" >/dev/null; } \
    || die "could not install ${browser_pkgs[*]}; install them with apt-get"
fi

# --- the Replication page's chart library (uPlot, MIT), vendored from npm: no CDN, works offline ---
# npm checks the tarball against the registry's integrity hash; we check it against our pin too.
UPLOT_VERSION=1.6.32
UPLOT_SHA512="KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw=="
vendor="$SNAPREPL_ROOT/include/snaprepl/airflow/ui/static/vendor"
if [ "$(cat "$vendor/.uplot-version" 2>/dev/null)" != "$UPLOT_VERSION" ]; then
  command -v npm >/dev/null || die "npm is needed to fetch the chart library (apt-get install npm)"
  say "fetching uPlot $UPLOT_VERSION from the npm registry"
  pack="$(mktemp -d)"
  (cd "$pack" && npm pack --silent "uplot@$UPLOT_VERSION" >/dev/null) || die "npm pack uplot@$UPLOT_VERSION failed"
  got="$("$PYTHON_BIN" -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$pack/uplot-$UPLOT_VERSION.tgz")"
  [ "$got" = "$UPLOT_SHA512" ] || { rm -rf "$pack"; die "uplot-$UPLOT_VERSION.tgz does not match its pinned sha512"; }
  mkdir -p "$vendor"
  tar -xzf "$pack/uplot-$UPLOT_VERSION.tgz" -C "$pack"
  cp "$pack/package/dist/uPlot.iife.min.js" "$pack/package/dist/uPlot.min.css" "$pack/package/LICENSE" "$vendor/"
  echo "$UPLOT_VERSION" > "$vendor/.uplot-version"
  rm -rf "$pack"
fi

# --- virtual environment -------------------------------------------------------------------------
stamp="$VENV/.snaprepl-requirements"
want="$(cat "$SNAPREPL_ROOT/requirements.txt" "$SNAPREPL_ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "creating the virtual environment in $VENV (pip install -r requirements.txt)"
  "$PYTHON_BIN" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -r "$SNAPREPL_ROOT/requirements.txt"
  "$VENV/bin/python" -m pip install -q --no-deps -e "$SNAPREPL_ROOT"
  echo "$want" > "$stamp"
fi

# An in-place build (the editable install above, `pip wheel .`) leaves include/snaprepl.egg-info, and
# include/ is on sys.path: Airflow would see the package twice and load its plugin entry point twice
# (the second as a plugin import error). The editable install's own metadata is in the venv.
rm -rf "$SNAPREPL_ROOT/include/snaprepl.egg-info"

# Bytecode for the checkout's modules, as an installed wheel has it (pip compiles at install). Where
# PYTHONDONTWRITEBYTECODE is set (this project's machines set it), every command would otherwise
# compile about 190 modules first: 0.4 s of a 1.0-second refresh. Only changed files recompile.
"$VENV/bin/python" -m compileall -q -j 0 "$SNAPREPL_ROOT/include/snaprepl" >/dev/null

# Spark's launcher scripts look for python3 on PATH and SPARK_HOME; point both at the venv.
export PATH="$VENV/bin:$PATH"
SPARK_HOME="$("$VENV/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
export SPARK_HOME
export PYSPARK_PYTHON="$VENV/bin/python"
export PYSPARK_DRIVER_PYTHON="$VENV/bin/python"

eval "$_snaprepl_restore"
unset _snaprepl_restore
