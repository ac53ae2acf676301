#!/usr/bin/env bash
# AddressSanitizer run of the whole test suite:
#
#     scripts/asan-tests.sh [pytest arguments...]      # e.g. scripts/asan-tests.sh -x -k dot
#     scripts/asan-tests.sh tests/test_jit.py -x         # only these test files
#
# Builds pullback's C extension with -Db_sanitize=address into its own build directory and venv
# under $PB_ASAN_DIR (default /tmp/pullback-asan), so the normal build and venv are untouched;
# then runs pytest there with libasan preloaded (Python itself is not instrumented) and
# ASAN_OPTIONS=detect_leaks=0 (CPython leaks by design) and allocator_may_return_null=1 (a request
# too large to serve returns NULL, so MemoryError paths run as they do without ASan). Fails if pytest fails or if ASan
# reports anything (reports are printed). The target_clones variants stay in: their ifunc
# resolvers run when the extension is loaded, after the preloaded ASan runtime initialised, so
# the instrumented AVX paths this machine really runs are the ones checked.
#
# Environment: PYTHON (interpreter for the venv, default python3), PB_ASAN_DIR.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${PB_ASAN_DIR:-/tmp/pullback-asan}
python=${PYTHON:-python3}
venv=$work/venv
mkdir -p "$work"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q meson-python meson ninja numpy scipy opt_einsum ml_dtypes \
    pytest hypothesis scikit-learn matplotlib nbformat nbclient ipykernel
fi

"$venv/bin/python" -m pip install -q scikit-learn matplotlib nbformat nbclient ipykernel safetensors tqdm
echo "asan: building with -Db_sanitize=address into $work/build"
"$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --force-reinstall \
  -Cbuild-dir="$work/build" \
  -Csetup-args=-Db_sanitize=address -Csetup-args=-Db_lundef=false \
  "$root"

libasan=$(gcc -print-file-name=libasan.so)
[ -e "$libasan" ] || { echo "asan: libasan.so not found (gcc -print-file-name=libasan.so)" >&2; exit 2; }
# libstdc++ is preloaded too: ASan's __cxa_throw interceptor must find the real one at start-up,
# or the first C++ exception in a later-loaded library (SciPy's special functions) aborts.
libstdcxx=$(gcc -print-file-name=libstdc++.so)
rm -f "$work"/asan.log.*

# Test paths given relative to the repository are resolved against it; without any, the whole
# suite runs.
args=() paths=()
for a in "$@"; do
  if [[ $a != -* && -e "$root/$a" ]]; then paths+=("$root/$a"); else args+=("$a"); fi
done
[ ${#paths[@]} -gt 0 ] || paths=("$root/tests")

# Run from $work so the source tree is not importable: the tests must load the ASan build.
set +e
(cd "$work" && LD_PRELOAD="$libasan:$libstdcxx" \
  ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:allocator_may_return_null=1:log_path=$work/asan.log" \
  "$venv/bin/python" -m pytest "${paths[@]}" -p no:cacheprovider -q ${args[@]+"${args[@]}"})
status=$?
set -e

# (a log holding only allocator_may_return_null's "failed to allocate" warnings is no report)
reports=$(grep -l "ERROR: AddressSanitizer" "$work"/asan.log.* 2>/dev/null || true)
if [ -n "$reports" ]; then
  echo "asan: AddressSanitizer reported errors:" >&2
  cat $reports >&2
  exit 1
fi
if [ $status -ne 0 ]; then
  echo "asan: the test suite failed (status $status)" >&2
  exit $status
fi
echo "asan: clean"
