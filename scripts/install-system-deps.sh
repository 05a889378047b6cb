#!/usr/bin/env bash
# What the real-gateway tests need besides Rust and Python: iproute2 (ip, ss,
# tc), ethtool and iperf3; chromium, in which the test of `netreturn report`
# opens the page (tests/test_htmlreport.py); and ns2 (ns-2.35, /usr/bin/ns)
# for the XCP comparison (`netreturn validate-xcp`, tests/test_ns2xcp.py);
# clang, llvm, libbpf-dev and bpftool for the gateway's kernel datapath (its
# eBPF object is built by crates/gateway/build.rs; bpftool checks teardown).
# Run before the first cargo build, so that the gateway is built with it. As
# root on a Debian-like system, installs whichever is missing (quietly);
# otherwise says what is missing, since those tests skip without it. Called
# by `make test` and by .ci/run: the one copy of this list.
set -euo pipefail

missing=""
command -v ip >/dev/null && command -v ss >/dev/null || missing="$missing iproute2"
command -v ethtool >/dev/null || missing="$missing ethtool"
command -v iperf3 >/dev/null || missing="$missing iperf3"
command -v ping >/dev/null || missing="$missing iputils-ping"
command -v chromium >/dev/null || missing="$missing chromium"
command -v ns >/dev/null || missing="$missing ns2"
command -v clang >/dev/null || missing="$missing clang"
command -v llvm-strip >/dev/null || missing="$missing llvm"
[ -f /usr/include/bpf/bpf_helpers.h ] || missing="$missing libbpf-dev"
command -v bpftool >/dev/null || missing="$missing bpftool"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing for the gateway, kernel-datapath, report-page and ns-2 tests:$missing"
    # Quiet unless it fails (debconf talks on stderr even with -qq).
    # Non-interactive: iperf3's package would ask whether to start a daemon
    # (the default, no, is what the tests want).
    if ! log=$(apt-get update -qq 2>&1 &&
               DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing 2>&1); then
        echo "$log" >&2
        exit 1
    fi
else
    echo "note: the real-gateway, report-page or ns-2 XCP tests will skip: missing$missing (as root: apt-get install$missing)" >&2
fi
