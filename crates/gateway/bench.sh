#!/usr/bin/env bash
# Forwarding benchmark of netreturn-gateway (root; iproute2, ethtool, iperf3,
# ping): kernel bridge vs gateway without controller vs gateway with RWM,
# between the same namespaces. Usage: crates/gateway/bench.sh [OUT_DIR] [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-/tmp/netreturn-bench}"
secs="${2:-5}"
: "${CARGO_TARGET_DIR:=$root/target}"
export CARGO_TARGET_DIR
cargo build --release -q -p netreturn-gateway --manifest-path "$root/Cargo.toml"
export NETRETURN_GATEWAY="$CARGO_TARGET_DIR/release/netreturn-gateway"
exec python3 - "$out" "$secs" <<PY
import sys
sys.path.insert(0, "$root/tests/testbed")
from _load import load_testbed
sys.exit(load_testbed().main(["bench", "--out", sys.argv[1], "--seconds", sys.argv[2]]))
PY
