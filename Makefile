# The few commands a newcomer needs. `make demo` and `make test` each do
# every set-up step themselves, on a fresh machine.
SHELL := bash
.SHELLFLAGS := -o pipefail -c

# Which Python: PY if given; else the active virtual environment's; else
# python3, unless the system's Python refuses pip (PEP 668,
# "externally-managed-environment", as on Debian 12 and Ubuntu 23.04+):
# then a project venv in .venv, made on first use.
SYSPY ?= python3
EXTERNALLY_MANAGED := $(shell $(SYSPY) -c 'import os, sys, sysconfig; \
	print(int(sys.prefix == sys.base_prefix and os.path.exists(os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED"))))' 2>/dev/null)
ifeq ($(EXTERNALLY_MANAGED),1)
PY ?= .venv/bin/python
export PATH := $(CURDIR)/.venv/bin:$(PATH)
else
PY ?= $(SYSPY)
endif
PIP ?= $(PY) -m pip
NETRETURN ?= $(PY) -m netreturn.cli

.PHONY: install system-deps demo test test-rust test-python bench fuzz lint clean

# The first build compiles the Rust core: about 4 minutes on 2 cores (later
# builds take seconds). Cargo's "Compiling ..." lines show its progress.
install:
	@if [ "$(PY)" = ".venv/bin/python" ] && [ ! -x .venv/bin/python ]; then \
		echo "netreturn: $(SYSPY) is externally managed (PEP 668): installing into a project venv, .venv"; \
		$(SYSPY) -m venv .venv || { echo "netreturn: no venv module: apt-get install python3-venv"; exit 1; }; fi
	@echo "netreturn: installing with $(PY) (the first build of the Rust core takes about 4 minutes on 2 cores)"
	@$(PIP) install --disable-pip-version-check --progress-bar off -v -e '.[test]' 2>&1 \
		| { grep --line-buffered -E '^ *(Compiling|Finished|Successfully installed)|[Ee]rror' || true; } \
		|| { echo "netreturn: the install failed; for pip's whole output: $(PIP) install -e '.[test]'"; exit 1; }
	@if [ "$(PY)" = ".venv/bin/python" ]; then echo "netreturn: to use the commands below in your shell: . .venv/bin/activate"; fi

# The default experiment: EWT scenario 2, DropTail and RED against the
# window-rewriting gateways EWA, AWM and EWT, 30 seeds.
demo: install
	$(NETRETURN) run

# The real-gateway tests need iproute2, ethtool and iperf3: installed here
# as root (apt-get), else they skip and the script says so.
system-deps:
	scripts/install-system-deps.sh

# system-deps first: the gateway's eBPF object needs clang when cargo first
# builds it.
test: system-deps install test-rust test-python

test-rust:
	cargo test --workspace

test-python:
	$(PY) -m pytest

bench: install
	$(NETRETURN) bench
	cargo run --release -q -p netreturn-sim -- scenarios/ewt/scenario2.toml --set flows=31 --repeat 5

# Style and lints, as CI checks them: rustfmt (rustfmt.toml), clippy with
# warnings as errors (workspace lint table in Cargo.toml), ruff
# ([tool.ruff] in pyproject.toml).
lint: install
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -q -- -D warnings
	$(PY) -m ruff check python tests

# The cargo-fuzz targets of fuzz/ (docs/fuzzing.md), FUZZ_SECONDS each;
# skipped with the reason when there is no nightly toolchain or cargo-fuzz.
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

clean:
	rm -rf target results .venv
