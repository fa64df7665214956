#!/usr/bin/env bash
# The issue-41 run queue: ALE screens of the policy head, MinAtar checks and the other games, one
# at a time, each resumable, each run's records copied into benchmarks/results/ (ale-screen/,
# minatar-head/, ale-games/) when it finishes. Edit the list at the bottom (only while the queue
# is not running: bash reads a script as it goes), then
#
#   nohup bash scripts/screen_queue.sh > runs/queue.out 2>&1 &
#
# A run with a checkpoint resumes; a finished one has RUN.done beside its folder (runs/screen/,
# runs/minatar-head/, runs/games/; RUN.toN.done for an extension to N frames). Stop it with
# `pkill -f scripts/screen_queue.sh` and then SIGTERM to the gdi run (`pkill -TERM -f RUN`),
# which checkpoints. Never run MinAtar beside an ALE run: on 2 cores the ALE run drops from ~800
# to ~150 frames/s.
set -u
cd "$(dirname "$0")/.."
GDI=.venv/bin/gdi
GAME="--preset gdi-i3 --env ale:Breakout --scale ale-cpu"
# A run started by an earlier queue (its process still going) is waited for, not doubled.
while pgrep -f "run-dir runs/(screen|minatar-head|games)|--resume runs/(screen|minatar-head|games)" >/dev/null; do
  sleep 30
done

archive() {  # archive RUN [RESULTS]: its records (not its checkpoints) into the repository,
             # under benchmarks/results/RESULTS (default ale-screen)
  local run=$1 dst=benchmarks/results/${2:-ale-screen}/$(basename "$1")
  mkdir -p "$dst"
  # -p keeps the files' times: benchmarks/time_to_score reads a run's clock from them.
  cp -p "$run/config.json" "$run/metrics.jsonl" "$dst/"
  [ -d "$run/eval" ] && cp -rp "$run/eval" "$dst/"
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

run_once() {  # run_once RUN RESULTS ARGS...: gdi train ARGS into RUN (or resume RUN from its
              # checkpoint), then its records into benchmarks/results/RESULTS, once
  local run=$1 results=$2; shift 2
  [ -e "$run.done" ] && return 0
  mkdir -p "$(dirname "$run")"
  if ls "$run"/checkpoints/ckpt_*.pt >/dev/null 2>&1; then
    nice $GDI train --resume "$run" || return 1
  else
    rm -rf "$run"
    nice $GDI train --run-dir "$run" "$@" || return 1
  fi
  archive "$run" "$results" && touch "$run.done"
}

game() {  # game GAME NAME SEED ARGS...: ale:GAME at ale-cpu, its whole 6M-frame schedule, with
          # the policy head; records into benchmarks/results/ale-games/GAME-NAME-SEED
  run_once "runs/games/$1-$2-$3" ale-games --preset gdi-i3 --env "ale:$1" --scale ale-cpu \
    --learning policy-head --seed "$3" "${@:4}"
}

minatar() {  # minatar NAME SEED ARGS...: make train's run (GDI-I³, MinAtar Breakout, 1M frames)
             # with the policy head, records into benchmarks/results/minatar-head/
  run_once "runs/minatar-head/$1-$2" minatar-head --preset gdi-i3 --env minatar:breakout \
    --learning policy-head --seed "$2" --no-report "${@:3}"
}

# --- the queue (twelfth session: seeds 1 and 2 of the standardized inputs to 2M, MinAtar's check
# of them before any default moves, then the other games). A run folder lost with a machine
# starts again from frame 0. ---
screen breakout-head-e-inputnorm 1 --set input_norm=running || exit 1  # a no-op when done
screen breakout-head-e-inputnorm 2 --set input_norm=running || exit 1
extend breakout-head-e-inputnorm 1 2e6 || exit 1
extend breakout-head-e-inputnorm 2 2e6 || exit 1
for seed in 0 1 2 3 4; do
  minatar breakout-head-inputnorm "$seed" --set input_norm=running || exit 1
done
# The other games with the head and standardized inputs, each to its 6M frames (~2.5 h here;
# several sessions: each resumes from its last checkpoint), seed 0 of each game first.
for seed in 0 1; do
  for game in Boxing SpaceInvaders MsPacman RoadRunner; do
    game "$game" head-e-inputnorm "$seed" --set input_norm=running || exit 1
  done
done
echo "queue done $(date)"
