# Quick start: `make verify` runs the verification suite (CPU), `make test` the tests.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= torch==2.13.0

$(BIN)/tdcheck: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# the CPU wheel first: an unpinned torch would pull a multi-GB CUDA build
	$(BIN)/pip install -q "$(TORCH_SPEC)" || $(BIN)/pip install -q torch --index-url https://download.pytorch.org/whl/cpu
	$(BIN)/pip install -q -e ".[dev]"
	touch $(BIN)/tdcheck

install: $(BIN)/tdcheck

verify: $(BIN)/tdcheck
	$(BIN)/tdcheck verify --profile quick --device cpu --out tdcheck-report

# the suite in TEST_JOBS processes (pytest-xdist; a claim's smoke tests stay in one worker)
TEST_JOBS ?= 2
# numpy's BLAS one thread per test worker: the workers already share the cores, and left to
# its default each worker's OpenBLAS ran a thread per core (the cooccurrence tests, -k
# "phase1 or cooccurrence" on 2 cores: 188 s at 2 BLAS threads a worker, 83 s at 1)
test: $(BIN)/tdcheck
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} \
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadgroup

lint: $(BIN)/tdcheck
	$(BIN)/ruff check .

figures: $(BIN)/tdcheck
	$(BIN)/tdcheck figures --out tdcheck-figures

bench: $(BIN)/tdcheck
	$(BIN)/tdcheck bench --out tdcheck-bench

# the prepared device check (10 minutes on one GPU); DRY=1 runs it on the CPU at smoke size
gpu-check: $(BIN)/tdcheck
	$(BIN)/python -m verify.gpu_check --out tdcheck-gpu-check $(if $(DRY),--dry,)

.PHONY: install verify test lint figures bench gpu-check
