# Two entry points for a fresh machine: `make run` (the main job) and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test install lint compile clean eee-validator

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

## The whole test suite.
test: $(STAMP)
	$(BIN)/python -m pytest

## Every Eval Ever's validator, for `helmbench export --format eee`: the every-eval-ever package needs
## Python >= 3.12 and rich < 15, so it gets a venv of its own (.venv-eee); the export tests use it when present.
EEE_PYTHON ?= python3.12
.venv-eee/.installed: constraints-eee.txt
	$(EEE_PYTHON) -m venv .venv-eee
	.venv-eee/bin/pip install --quiet -c constraints-eee.txt every-eval-ever==0.3.0
	touch .venv-eee/.installed

eee-validator: .venv-eee/.installed

clean:
	rm -rf build
