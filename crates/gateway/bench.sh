#!/usr/bin/env bash
# Forwarding benchmark of netreturn-gateway (root; iproute2, ethtool, iperf3,
# ping): kernel bridge, gateway without controller, and gateway with each
# controller (ewt, ewa, awm, saplaw, rwm), between the same namespaces, side
# by side in one table (best of REPEAT interleaved trials, with the spread).
#
# Usage: crates/gateway/bench.sh [OUT_DIR] [SECONDS] [REPEAT] [MODE...]
#   e.g. crates/gateway/bench.sh /tmp/nrbench 5 3
#        crates/gateway/bench.sh /tmp/nrbench 5 3 kernel gateway gateway+rwm
# Extra gateway flags for every gateway mode: NETRETURN_BENCH_GW_ARGS="--io mmsg"
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-/tmp/netreturn-bench}"
secs="${2:-5}"
repeat="${3:-3}"
shift $(( $# < 3 ? $# : 3 ))
: "${CARGO_TARGET_DIR:=$root/target}"
export CARGO_TARGET_DIR
cargo build --release -q -p netreturn-gateway --manifest-path "$root/Cargo.toml"
export NETRETURN_GATEWAY="$CARGO_TARGET_DIR/release/netreturn-gateway"
exec python3 - "$out" "$secs" "$repeat" "$@" <<PY
import importlib, os, sys
from pathlib import Path
sys.path.insert(0, "$root/tests/testbed")
from _load import load_testbed
b = importlib.import_module(load_testbed().__name__ + ".bench")
out, secs, rep, modes = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:] or None
extra = os.environ.get("NETRETURN_BENCH_GW_ARGS", "").split()
try:
    rows = b.bench(out, secs, modes=modes, repeat=rep, gateway_args=extra)
except b.TestbedError as e:
    sys.exit(f"bench: {e}")
print(b.format_table(rows))
print(f"(every trial: {out}/bench.csv; summary: {out}/bench_summary.csv)")
PY
