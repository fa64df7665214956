#!/usr/bin/env bash
# The issue-41 run queue: ALE screens of the policy head, one at a time, each resumable, each
# run's records copied into benchmarks/results/ale-screen/ when it finishes. Edit the list at the
# bottom (only while the queue is not running: bash reads a script as it goes), then
#
#   nohup bash scripts/screen_queue.sh > runs/queue.out 2>&1 &
#
# A run with a checkpoint resumes; a finished one has runs/screen/RUN.done (RUN.toN.done for an
# extension to N frames). Stop it with `pkill -f scripts/screen_queue.sh` and then SIGTERM to the
# gdi run (`pkill -TERM -f RUN`), which checkpoints. Never run MinAtar beside it: on 2 cores
# the ALE run drops from ~800 to ~150 frames/s.
set -u
cd "$(dirname "$0")/.."
GDI=.venv/bin/gdi
GAME="--preset gdi-i3 --env ale:Breakout --scale ale-cpu"
# A run started by an earlier queue (its process still going) is waited for, not doubled.
while pgrep -f "run-dir runs/screen|--resume runs/screen" >/dev/null; do sleep 30; done

archive() {  # archive RUN: its records (not its checkpoints) into the repository
  local run=$1 dst=benchmarks/results/ale-screen/$(basename "$1")
  mkdir -p "$dst"
  cp "$run/config.json" "$run/metrics.jsonl" "$dst/"
  [ -d "$run/eval" ] && cp -r "$run/eval" "$dst/"
  gzip -c "$run/meta.jsonl" > "$dst/meta.jsonl.gz"
}

screen() {  # screen NAME SEED ARGS...: the first 1M frames of a 6M-frame schedule, with the
            # policy head (--learning policy-head), or the paper's T with LEARNING=paper
  local name=$1 seed=$2; shift 2
  local run=runs/screen/$name-$seed
  [ -e "$run.done" ] && return 0
  if ls "$run"/checkpoints/ckpt_*.pt >/dev/null 2>&1; then
    nice $GDI train --resume "$run" --stop-at 1e6 || return 1
  else
    rm -rf "$run"
    nice $GDI train $GAME --learning "${LEARNING:-policy-head}" --stop-at 1e6 --seed "$seed" --run-dir "$run" "$@" || return 1
  fi
  archive "$run" && touch "$run.done"
}

extend() {  # extend NAME SEED FRAMES: a finished screen continued to FRAMES of its schedule
  local run=runs/screen/$1-$2
  [ -e "$run.to$3.done" ] && return 0
  nice $GDI train --resume "$run" --stop-at "$3" || return 1
  archive "$run" && touch "$run.to$3.done"
}

# --- the queue (the eleventh session: seed 0 of the standardized inputs to 2M, six levers on top
# of them, screened on seed 0 against it, then seeds 1 and 2 to 2M). A run folder lost with a
# machine starts again from frame 0. ---
screen breakout-head-e-inputnorm 0 --set input_norm=running || exit 1
extend breakout-head-e-inputnorm 0 2e6 || exit 1
screen breakout-head-e-inputnorm-minreplay16 0 --set input_norm=running min_replay=16 || exit 1
screen breakout-head-e-inputnorm-q1 0 --set input_norm=running q_loss_scale=1 || exit 1
screen breakout-head-e-inputnorm-box2 0 --set input_norm=running \
    'meta_kwargs.ranges=[[0,2],[0,2],[0,1]]' 'meta_kwargs.accuracies=[0.04,0.04,0.1]' || exit 1
screen breakout-head-e-inputnorm-clip0.2 0 --set input_norm=running pg_clip=0.2 || exit 1
screen breakout-head-e-inputnorm-box100 0 --set input_norm=running \
    'meta_kwargs.ranges=[[0,100],[0,100],[0,1]]' 'meta_kwargs.accuracies=[2,2,0.1]' || exit 1
screen breakout-head-e-inputnorm-lr7.5e-4 0 --set input_norm=running learning_rate=7.5e-4 || exit 1
screen breakout-head-e-inputnorm 1 --set input_norm=running || exit 1
screen breakout-head-e-inputnorm 2 --set input_norm=running || exit 1
extend breakout-head-e-inputnorm 1 2e6 || exit 1
extend breakout-head-e-inputnorm 2 2e6 || exit 1
echo "queue done $(date)"
