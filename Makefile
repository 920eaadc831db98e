# Two entry points for a fresh machine: `make run` (the main job) and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test install lint compile clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## The main job: lint -> compile -> run (dry-run without OPENROUTER_API_KEY) -> publish.
run: $(STAMP)
	$(BIN)/helmbench lint benchmark
	$(BIN)/helmbench compile benchmark
	$(BIN)/helmbench run
	$(BIN)/helmbench publish

## The whole test suite, on every core (pytest-xdist). `--dist loadgroup` keeps the tests that share an
## expensive session fixture (a pipeline's database, a built site) on one worker, so it is built once.
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadgroup

clean:
	rm -rf build
