# shmloader — see README.md. Every target installs what it needs from a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := build

BUILD   := $(CURDIR)/build
VENV    := $(CURDIR)/.venv
PY      := $(VENV)/bin/python
GO      ?= go
GOFLAGS_TEST ?= -race -count=1
PYREQ   := bindings/python/requirements.txt
LINTREQ := bindings/python/requirements-lint.txt
DEMOREQ := bindings/python/requirements-demo.txt
DIST    := $(BUILD)/dist
WHEEL_SRC := $(BUILD)/wheel/src
BVENV   := $(CURDIR)/.venv-bench
BPY     := $(BVENV)/bin/python
TVENV   := $(CURDIR)/.venv-torch
TPY     := $(TVENV)/bin/python
TORCHREQ := bindings/python/requirements-torch.txt

export SHMLOADER_BIN := $(BUILD)/bin/shmloader
export SHMLOADER_LIB := $(BUILD)/lib/libshmloader.so

.PHONY: build go-build c-build lint lint-go demo-venv venv lint-venv lint-python wheel torch-venv bench-venv demo test test-go test-c test-python test-fuzz test-torch soak print-fuzz-targets bench bench-report bench-transport bench-torch bench-producer bench-cachesim fuzz clean distclean

build: go-build c-build

go-build:
	@mkdir -p $(BUILD)/bin
	$(GO) mod download
	$(GO) build -o $(BUILD)/bin/shmloader ./cmd/shmloader

c-build:
	$(MAKE) -C bindings/c BUILD=$(BUILD) lib examples
	# A new file, renamed into place, and only when it changed: a process that has the
	# old one loaded (a test run that rebuilds, as test_wheel.py does) keeps its pages.
	cmp -s $(BUILD)/lib/libshmloader.so bindings/python/shmloader/libshmloader.so || \
	  { cp $(BUILD)/lib/libshmloader.so bindings/python/shmloader/libshmloader.so.tmp && \
	    mv -f bindings/python/shmloader/libshmloader.so.tmp bindings/python/shmloader/libshmloader.so; }

# Lint is a test: every check here fails the target. lint-go: gofmt (any Go file git
# tracks, or would, that it would change), go vet, and staticcheck at a pinned version,
# installed into build/tools on first use (a new pin gets a folder of its own).
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(BUILD)/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck

lint: lint-go lint-python

lint-go: $(STATICCHECK)
	@unformatted=$$(git ls-files --cached --others --exclude-standard '*.go' | xargs gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: these files need gofmt -w:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	GOBIN=$(dir $@) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# The Python venv inside the repo, in two pinned layers with a stamp each, so that a
# target installs only what it needs and a layer is installed again only when its files
# change. demo-venv: what make demo (and make wheel) needs, requirements-demo.txt (numpy and
# the build backend) and the package, editable. venv: the test set, requirements.txt, on top.
demo-venv: $(VENV)/.demo-installed
$(VENV)/.demo-installed: $(DEMOREQ) bindings/python/pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r $(DEMOREQ)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e bindings/python
	touch $@

venv: $(VENV)/.installed
$(VENV)/.installed: $(VENV)/.demo-installed $(PYREQ)
	$(PY) -m pip install --quiet --disable-pip-version-check -r $(PYREQ)
	touch $@

# The Python lint: ruff check, ruff format --check and mypy over the package, setup.py, the
# tests and the examples (strict on the package; bindings/python/pyproject.toml has the
# settings). Pinned ruff and mypy go into .venv as a third layer, on top of the test set,
# whose types mypy reads.
lint-venv: $(VENV)/.lint-installed
$(VENV)/.lint-installed: $(VENV)/.installed $(LINTREQ)
	$(PY) -m pip install --quiet --disable-pip-version-check -r $(LINTREQ)
	touch $@

lint-python: lint-venv
	cd bindings/python && $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy

# A platform wheel (py3-none-linux_x86_64) in build/dist: the Python package with
# libshmloader.so and a static shmloader binary (CGO_ENABLED=0) in shmloader/bin, which the
# wheel's `shmloader` console script runs. It is built from a copy of the package in
# build/wheel/src, so the source tree never holds a binary that an editable install would run.
wheel: c-build demo-venv
	rm -rf $(BUILD)/wheel $(DIST)
	mkdir -p $(WHEEL_SRC)/shmloader/bin $(DIST)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(WHEEL_SRC)/shmloader/bin/shmloader ./cmd/shmloader
	cp bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md $(WHEEL_SRC)/
	cp bindings/python/shmloader/*.py bindings/python/shmloader/py.typed $(BUILD)/lib/libshmloader.so $(WHEEL_SRC)/shmloader/
	$(PY) -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation --wheel-dir $(DIST) $(WHEEL_SRC)
	@ls -l $(DIST)/*.whl

# The main job on the synthetic default dataset (generated once into build/demo-data):
# `shmloader serve` and two Python trainer processes; numpy is all the trainers need.
demo: build demo-venv
	bash bindings/python/examples/demo.sh

test: build venv test-go test-fuzz test-c test-python

test-go: go-build c-build
	$(GO) test $(GOFLAGS_TEST) ./...
	# Allocation counts mean something only without the race detector (allocs_test.go).
	$(GO) test -count=1 -run Allocations ./producer/serve/

test-c: go-build
	$(MAKE) -C bindings/c BUILD=$(BUILD) test

test-python: build venv
	$(PY) -m pytest -q bindings/python/tests --ignore=bindings/python/tests/with_torch

# The PyTorch tests (bindings/python/tests/with_torch): a real training loop, DataLoader, DDP
# under torchrun, zero-copy views, and CUDA pinning and copies where a GPU is present.
# In their own venv, because torch's wheels (with their CUDA libraries) are large.
torch-venv: $(TVENV)/.installed
$(TVENV)/.installed: $(DEMOREQ) $(PYREQ) $(TORCHREQ) bindings/python/pyproject.toml
	python3 -m venv $(TVENV)
	$(TPY) -m pip install --quiet --disable-pip-version-check -r $(TORCHREQ)
	$(TPY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e bindings/python
	touch $@

test-torch: build torch-venv
	$(TPY) -m pytest -q bindings/python/tests/with_torch

# The side-by-side benchmark (bench/peers/run.py): shmloader against Petastorm, the PyTorch
# DataLoader, raw arrow-go decoding and memcpy on the same work, in its own pinned venv;
# writes bench/results/peers.json, the plots in bench/plots and the table in RESULTS.md.
# ROWS (dataset size, default 2000000), ROUNDS (3), STEP_MS (simulated step, 6), ONLY.
bench: build bench-venv
	$(GO) build -o $(BUILD)/bin/rawdecode ./bench/rawdecode
	$(BPY) bench/peers/run.py $(if $(ROWS),--rows $(ROWS)) $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(STEP_MS),--step-ms $(STEP_MS)) $(if $(ONLY),--only $(ONLY))
	$(BPY) bench/peers/report.py

# Tables and plots again from the committed bench/results/peers.json, without running.
bench-report: bench-venv
	$(BPY) bench/peers/report.py

bench-venv: $(BVENV)/.installed
$(BVENV)/.installed: bench/requirements.txt bindings/python/pyproject.toml
	@python3 -c 'import sys; sys.exit(0 if (3, 9) <= sys.version_info[:2] <= (3, 12) else "make bench: the pinned peers (pyarrow 14, numpy 1.26) need CPython 3.9 to 3.12; python3 is " + sys.version.split()[0])'
	python3 -m venv $(BVENV)
	$(BPY) -m pip install --quiet --disable-pip-version-check -r bench/requirements.txt
	$(BPY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e bindings/python
	touch $@

# Transport benchmarks: ring handoff, latency and throughput against memcpy.
bench-transport: build venv
	$(MAKE) -C bindings/c BUILD=$(BUILD) bench-bin
	bash bench/transport.sh

# Handoff per batch through shmloader.torch next to the numpy path (and with a pinned
# ring where CUDA is present): section 5 of bench/transport.sh, in the torch venv.
bench-torch: build torch-venv
	$(MAKE) -C bindings/c BUILD=$(BUILD) bench-bin
	SECTIONS=5 bash bench/transport.sh

# serve against raw arrow-go decoding of the same columns (bench/RESULTS.md).
bench-producer: build venv
	bash bench/producer.sh

# Cache eviction by the plan's future (Belady) against LRU, simulated on the row groups one
# node of the bench job reads over 6 epochs (bench/cachesim); writes
# bench/results/cachesim.json. CACHESIM_ARGS: more flags (go run ./bench/cachesim -h).
# Plot: $(BPY) bench/cachesim/plot.py (bench/plots/cachesim.png).
bench-cachesim:
	$(GO) run ./bench/cachesim -json bench/results/cachesim.json $(CACHESIM_ARGS)

# Coverage-guided fuzzing of the parsers of untrusted bytes: ring headers, Parquet page
# headers, LZ4 page bodies, configs, cache entry headers and manifests (make test runs the
# seed corpora).
# Every Go fuzz target, as package:function. make test runs each one briefly
# (FUZZTIME_TEST executions) from its committed corpus (the package's testdata/fuzz),
# after checking that this list names every Fuzz function in the tree; make fuzz runs
# them longer. A count, not a duration, in make test: Go 1.26's coordinator can report
# "context deadline exceeded" when a duration ends mid-execution (go.dev/issue/75804),
# which would fail make test with no input at fault.
FUZZ_TARGETS = ring:FuzzValidateHeader ring:FuzzSlotHeader \
  producer/dataset:FuzzPageHeader producer/pages:FuzzLZ4Hadoop producer/dataset:FuzzSanitizeFooter producer/dataset:FuzzFooter \
  producer/pages:FuzzDecoder producer/pages:FuzzHybrid producer/pages:FuzzHeader \
  producer/pages:FuzzDeltaBinaryPacked producer/pages:FuzzDeltaByteArray \
  producer/internal/thrift:FuzzReader producer/config:FuzzParse cache:FuzzEntryHeader cache:FuzzManifest cache:FuzzManifestBody
FUZZTIME ?= 60s
FUZZTIME_TEST ?= 2000x

# $(call fuzz-all,TIME): each target for TIME; a crash fails the run and leaves its input
# in the package's testdata/fuzz, to commit with the fix.
define fuzz-all
	@listed=$$(printf '%s\n' $(FUZZ_TARGETS) | sed 's/.*://' | sort); \
	found=$$(git ls-files '*_test.go' | xargs grep -hoE '^func Fuzz[A-Za-z0-9_]+' | sed 's/^func //' | sort); \
	if [ "$$listed" != "$$found" ]; then \
	  echo "FUZZ_TARGETS in the Makefile names:" $$listed; echo "the tree has:" $$found; exit 1; fi
	@for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$t for $(1)"; \
	  $(GO) test ./$${t%%:*} -run '^$$' -fuzz "^$${t##*:}\$$" -fuzztime $(1) || exit 1; \
	done
endef

fuzz:
	$(call fuzz-all,$(FUZZTIME))

test-fuzz:
	$(call fuzz-all,$(FUZZTIME_TEST))

print-fuzz-targets:
	@echo $(FUZZ_TARGETS)

# The long reliability suite (RELIABILITY.md): 1,000 fault-injection iterations, 16 rings
# under load for 10 minutes, the memory bound on a dataset 10x the demo's (generated into
# build/membound, about 6 GB), every fuzz target for 15 s and a million corrupted ring
# headers under ASan and UBSan. Prints a summary and writes the figures into RELIABILITY.md
# and bench/RESULTS.md. About 40 minutes on 2 cores. SOAK_ARGS: e.g. --only faults,load or
# --iterations 200 (a partial soak writes nothing).
soak: build venv
	$(MAKE) -C bindings/c BUILD=$(BUILD) $(BUILD)/c-tests/test_validate
	cd bindings/python/tests && $(PY) soak.py $(SOAK_ARGS)

clean:
	rm -rf $(BUILD) bindings/python/shmloader/libshmloader.so

distclean: clean
	rm -rf $(VENV) $(BVENV) $(TVENV)
