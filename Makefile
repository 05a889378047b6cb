# The few commands a newcomer needs. `make demo` and `make test` each do
# every set-up step themselves, on a fresh machine.
PY ?= python3
PIP ?= $(PY) -m pip

.PHONY: install demo test test-rust test-python bench fuzz lint clean

install:
	$(PIP) install --quiet --disable-pip-version-check -e '.[test]'

# The default experiment: EWT scenario 2, DropTail and RED against the
# window-rewriting gateways EWA, AWM and EWT, 30 seeds.
demo: install
	netreturn run

test: install test-rust test-python

test-rust:
	cargo test --workspace

test-python:
	$(PY) -m pytest

bench: install
	netreturn bench
	cargo run --release -q -p netreturn-sim -- scenarios/ewt/scenario2.toml --set flows=31 --repeat 5

# The cargo-fuzz targets of fuzz/ (docs/fuzzing.md), FUZZ_SECONDS each;
# skipped with the reason when there is no nightly toolchain or cargo-fuzz.
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

clean:
	rm -rf target results
