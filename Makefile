PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install system-deps test demo simulate lint typecheck bench clean train-deps

# Debian packages the project needs: the DejaVu fonts draw the card faces and stand in for
# Ultralytics' Arial; Chromium is the browser the scoreboard tests drive with Playwright (Playwright's
# own browser download is not used). Installed with apt when missing (needs root, as on CI).

system-deps:
	@if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSansCondensed.ttf ] || [ ! -x /usr/bin/chromium ]; then \
		echo "installing fonts-dejavu-core fonts-dejavu-extra chromium with apt"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-dejavu-core fonts-dejavu-extra chromium; \
	fi

$(STAMP): pyproject.toml | system-deps
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

# the built-in demo: a bot game rendered frame by frame through the recogniser and referee, live on
# http://127.0.0.1:8000 (scoreboard) and /host (PIN 1234); Ctrl-C stops it
demo: $(STAMP)
	$(BIN)/mayi-table demo --port 8000

simulate: $(STAMP)
	$(BIN)/mayi-table simulate --profile petras --players 4 --games 20 --seed 1
	$(BIN)/mayi-table simulate --profile classic --players 4 --games 20 --seed 1

bench: $(STAMP)
	$(BIN)/python benchmarks/rules.py
	$(BIN)/python benchmarks/web.py --clients 100 --events 100
	$(BIN)/python benchmarks/memory.py --backends onnx,ncnn

# training only: torch (CPU work, from this machine's local wheels), ultralytics, onnx, and Debian's
# card themes and fonts (rendered into training data, never committed)
train-deps: $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,train]'
	sh vision_models/install_card_themes.sh

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
