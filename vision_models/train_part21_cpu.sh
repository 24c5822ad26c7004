#!/bin/sh
# Classifier part 21 on the CPU, one session's worth at a time (vision_models/MODEL_CARD.md, "Next
# runs"). Nothing git ignores is sure to outlive a session on the training machine, so a session
# that finds no data builds it again (every build is seeded: the same crops each time, about 46
# minutes on 2 cores) and the run carries its last finished epoch in the repository:
# vision_models/checkpoints/index21cpu_last.pt (the EMA weights, epoch and schedule, without the
# optimizer's moments, which AdamW rebuilds within an epoch). Stop the training with
# `pkill -f 'mayi-table train'`: this script then writes that file from the last finished epoch
# (or the finished run's weights); commit it.
set -eu
cd "$(dirname "$0")/.."
BIN=.venv/bin
RUN=runs/index21cpu
KEPT=vision_models/checkpoints/index21cpu_last.pt
KEPT_CSV=vision_models/checkpoints/index21cpu_results.csv

build() {  # OUT RECIPE: one index build in two processes, skipped once finished
    [ -f "data/$1/.built" ] && return 0
    mkdir -p data
    "$BIN/mayi-table" dataset --stage index --out "data/$1" --designs procedural,variants,themes,fonts,crowded \
        --recipe "vision_models/$2" --mine-with vision_models --shard 1/2 >"data/$1.shard1.log" 2>&1 &
    other=$!
    "$BIN/mayi-table" dataset --stage index --out "data/$1" --designs procedural,variants,themes,fonts,crowded \
        --recipe "vision_models/$2" --mine-with vision_models --shard 0/2
    wait "$other" || { echo "data/$1: shard 1/2 failed, see data/$1.shard1.log" >&2; exit 1; }
    touch "data/$1/.built"
}

if [ ! -d data/index-p21/train ]; then
    build index-wide-t index_wide_recipe.yaml       # part 17's scenes, seed 117
    build index-more index_wide_more_recipe.yaml    # part 18's scenes, seed 131
    build index-tens index_tens_recipe.yaml         # part 20's scenes, seed 151
    "$BIN/mayi-table" pack-crops data/index-wide-t data/index-more data/index-tens --out data/index-p21.npz
    "$BIN/mayi-table" unpack-crops data/index-p21.npz --out data/index-p21
fi

if [ ! -f "$RUN/weights/last.pt" ] && [ -f "$KEPT" ]; then
    mkdir -p "$RUN/weights"
    # the checkpoint names its run's folder in full: point it at this checkout's
    "$BIN/python" - "$KEPT" "$RUN" <<'EOF'
import sys, torch
from pathlib import Path
ckpt = torch.load(sys.argv[1], map_location="cpu", weights_only=False)
run = Path(sys.argv[2]).resolve()
ckpt["train_args"].update(project=str(run.parent), name=run.name, save_dir=str(run))
torch.save(ckpt, run / "weights" / "last.pt")
EOF
    # earlier sessions' epochs: Ultralytics appends this session's to them
    [ -f "$KEPT_CSV" ] && cp "$KEPT_CSV" "$RUN/results.csv"
fi
resume=""
[ -f "$RUN/weights/last.pt" ] && resume="--resume"
"$BIN/mayi-table" train --stage index --data data/index-p21 --run "$RUN" \
    --recipe vision_models/index_tens_all_cpu_recipe.yaml --no-export $resume || true

mkdir -p "$(dirname "$KEPT")"
"$BIN/python" - "$RUN/weights/last.pt" "$KEPT" <<'EOF'
import sys, torch
ckpt = torch.load(sys.argv[1], map_location="cpu", weights_only=False)
# AdamW's moments dropped (a fifth of the size; they rebuild within an epoch); its parameter groups
# kept, without which Ultralytics takes the file for finished weights and starts a new run
if ckpt.get("optimizer") is not None:  # None: a finished run, its weights kept as they are
    ckpt["optimizer"] = {"state": {}, "param_groups": ckpt["optimizer"]["param_groups"]}
torch.save(ckpt, sys.argv[2])
done = "finished" if ckpt["epoch"] < 0 else f"epoch {ckpt['epoch'] + 1} of {ckpt['train_args']['epochs']}"
print(f"{sys.argv[2]}: {done} kept")
EOF
cp "$RUN/results.csv" "$KEPT_CSV"
