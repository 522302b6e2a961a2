#!/usr/bin/env bash
# Build snaprepl's wheel and prove it whole: install it into a scratch virtual environment that holds
# only the distributions it declares (and those of its extras), then run scripts/wheel_smoke.py there
# with `python -I` from a temporary directory, so nothing of the checkout is importable. Run by
# scripts/test.sh (after setup). Prints the wheel's data files.
#
# The declared distributions are not installed again (pyspark's jars and Airflow take minutes to
# unpack): scripts/wheel_env.py resolves the wheel's requirements against the development venv (the
# lock) and symlinks exactly those distributions' files; `pip check` then verifies them independently.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${VENV:-$root/.venv}"
pip=("$venv/bin/python" -m pip)
extras=(collections lineage statsd)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Built from a copy: setuptools' build/ directory in the checkout would carry deleted modules along.
mkdir -p "$work/src/include"
cp "$root/pyproject.toml" "$root/README.md" "$work/src/"
cp -r "$root/include/snaprepl" "$work/src/include/"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
"${pip[@]}" wheel -q --no-deps "$work/src" -w "$work/dist"
wheel="$(ls "$work"/dist/snaprepl-*.whl)"
echo "wheel smoke: $(basename "$wheel") holds $(unzip -Z1 "$wheel" | wc -l) files; its data files:"
unzip -Z1 "$wheel" | grep -v -e '\.py$' -e '\.dist-info/' | sed 's/^/  /'

"$venv/bin/python" -m venv --without-pip "$work/venv"  # the same Python: the linked extensions are built for it
"${pip[@]}" --python "$work/venv/bin/python" install -q --no-deps --no-index --no-compile "$wheel"
site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$venv/bin/python" "$root/scripts/wheel_env.py" "$site" snaprepl "${extras[@]}"
"${pip[@]}" --python "$work/venv/bin/python" check
cd "$work"
env -i PATH="$work/venv/bin:/usr/bin:/bin" HOME="$work" JAVA_HOME="${JAVA_HOME:-}" \
  "$work/venv/bin/python" -I "$root/scripts/wheel_smoke.py"
