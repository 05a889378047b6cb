#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ (docs/fuzzing.md), each for
# FUZZ_SECONDS (default 60), one after another, one libFuzzer process at a
# time. Usage: scripts/fuzz.sh [TARGET...]   (default: every target)
#
# Needs a nightly toolchain and cargo-fuzz:
#   rustup toolchain install nightly --profile minimal
#   cargo +nightly install cargo-fuzz
# Without them it says why and exits 0 (CI runs it where they may be absent).
#
# Environment:
#   FUZZ_SECONDS      time per target (libFuzzer's -max_total_time)
#   FUZZ_CORPUS_DIR   where new inputs go, per target (default
#                     fuzz/target/fuzz-corpus; a relative path is taken from
#                     fuzz/); fuzz/corpus/<target> is read as seeds, never written
#   FUZZ_SECONDS=0    builds only
#   CARGO_TARGET_DIR  build directory (default fuzz/target)
#   FUZZ_ARGS         more libFuzzer flags
# A crash stops the run: the input is in fuzz/artifacts/<target>/, and the
# exit status is non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
all_targets=(wire_parsers gateway_pipeline scenario_loader aqm_queues)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi

skip() {
    echo "fuzz: skipped: $1"
    exit 0
}
command -v cargo >/dev/null || skip "no cargo on PATH"
command -v rustup >/dev/null || skip "no rustup (a nightly toolchain is needed)"
cargo +nightly --version >/dev/null 2>&1 \
    || skip "no nightly toolchain (rustup toolchain install nightly --profile minimal)"
cargo +nightly fuzz --version >/dev/null 2>&1 \
    || skip "cargo-fuzz is not installed (cargo +nightly install cargo-fuzz)"

# Every target panics on a failed invariant; debug assertions on (the
# project's own checks: time never runs backward, queues never negative);
# no sanitizer: the fuzzed code is safe Rust (the unsafe socket code of
# crates/gateway/src/sys is not reached), and ASan would halve throughput.
build_flags=(--debug-assertions --sanitizer none)
max_len() {
    case "$1" in
        scenario_loader) echo 16384 ;;  # whole scenario files (the largest is ~3 kB)
        *) echo 8192 ;;
    esac
}

cd fuzz
echo "fuzz: building ${targets[*]}"
if [ $# -eq 0 ]; then
    cargo +nightly fuzz build "${build_flags[@]}"
else
    for t in "${targets[@]}"; do cargo +nightly fuzz build "${build_flags[@]}" "$t"; done
fi
[ "$seconds" = 0 ] && exit 0
logs="${CARGO_TARGET_DIR:-target}/fuzz-logs"
mkdir -p "$logs"
status=0
for t in "${targets[@]}"; do
    corpus="${FUZZ_CORPUS_DIR:-target/fuzz-corpus}/$t"
    mkdir -p "$corpus"
    echo "fuzz: $t for ${seconds}s (new inputs in $corpus, log in $logs/$t.log)"
    set +e
    # shellcheck disable=SC2086
    cargo +nightly fuzz run "${build_flags[@]}" "$t" "$corpus" "corpus/$t" -- \
        -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 ${FUZZ_ARGS:-} >"$logs/$t.log" 2>&1
    rc=$?
    set -e
    grep -E "Done|DONE|stat::number_of_executed_units|stat::average_exec_per_sec" "$logs/$t.log" || true
    if [ $rc -ne 0 ]; then
        grep -E -A 12 "panicked|ERROR: libFuzzer" "$logs/$t.log" | head -n 40 || tail -n 40 "$logs/$t.log"
        echo "fuzz: $t FAILED (exit $rc); the input is in fuzz/artifacts/$t/ (docs/fuzzing.md: reproducing a crash)"
        status=1
    fi
done
exit $status
