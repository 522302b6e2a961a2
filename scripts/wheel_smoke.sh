#!/usr/bin/env bash
# Build snaprepl's wheel and prove it whole: install it, with only what it declares (and its extras),
# into a scratch virtual environment, then run scripts/wheel_smoke.py there with `python -I` from a
# temporary directory, so nothing of the checkout is importable. Run by scripts/test.sh (after setup).
#
# The dependencies come from a wheelhouse of requirements.txt (the lock) kept in the venv and rebuilt
# when the lock changes (pip's cache makes that quick); pip installs from it with --no-index, so a
# distribution the wheel does not declare is not there. Prints the wheel's non-Python files.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${VENV:-$root/.venv}"
pip=("$venv/bin/python" -m pip)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

wheelhouse="$venv/wheelhouse"
want="$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)"
if [ "$(cat "$wheelhouse/.lock-sha256" 2>/dev/null)" != "$want" ]; then
  echo "wheel smoke: filling $wheelhouse from requirements.txt"
  rm -rf "$wheelhouse"
  "${pip[@]}" wheel -q -r "$root/requirements.txt" -w "$wheelhouse"
  echo "$want" > "$wheelhouse/.lock-sha256"
fi

# Built from a copy: setuptools' build/ directory in the checkout would carry deleted modules along.
mkdir -p "$work/src/include"
cp "$root/pyproject.toml" "$root/README.md" "$work/src/"
cp -r "$root/include/snaprepl" "$work/src/include/"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
"${pip[@]}" wheel -q --no-deps "$work/src" -w "$work/dist"
wheel="$(ls "$work"/dist/snaprepl-*.whl)"
echo "wheel smoke: $(basename "$wheel") holds $(unzip -Z1 "$wheel" | wc -l) files; its data files:"
unzip -Z1 "$wheel" | grep -v -e '\.py$' -e '\.dist-info/' | sed 's/^/  /'

python3 -m venv --without-pip "$work/venv"
"${pip[@]}" --python "$work/venv/bin/python" install -q --no-compile --no-index --find-links "$wheelhouse" \
  "$wheel[collections,lineage,statsd]"
"${pip[@]}" --python "$work/venv/bin/python" check
cd "$work"
env -i PATH="$work/venv/bin:/usr/bin:/bin" HOME="$work" JAVA_HOME="${JAVA_HOME:-}" \
  "$work/venv/bin/python" -I "$root/scripts/wheel_smoke.py"
