PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test demo lint typecheck bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check device tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest -n 2

demo: $(STAMP)
	$(BIN)/mayi-table simulate --profile petras --players 4 --games 20 --seed 1
	$(BIN)/mayi-table simulate --profile classic --players 4 --games 20 --seed 1

bench: $(STAMP)
	$(BIN)/python benchmarks/rules.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
