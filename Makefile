# The few commands a newcomer needs. `make demo` and `make test` each do
# every set-up step themselves, on a fresh machine.
PY ?= python3
PIP ?= $(PY) -m pip

.PHONY: install system-deps demo test test-rust test-python bench fuzz lint clean

install:
	$(PIP) install --quiet --disable-pip-version-check -e '.[test]'

# The default experiment: EWT scenario 2, DropTail and RED against the
# window-rewriting gateways EWA, AWM and EWT, 30 seeds.
demo: install
	netreturn run

# The real-gateway tests need iproute2, ethtool and iperf3: installed here
# as root (apt-get), else they skip and the script says so.
system-deps:
	scripts/install-system-deps.sh

test: install system-deps test-rust test-python

test-rust:
	cargo test --workspace

test-python:
	$(PY) -m pytest

bench: install
	netreturn bench
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
	rm -rf target results
