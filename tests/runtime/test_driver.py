"""The driver's flow control against a fake backend and a fake learner (no processes, no
networks): windows are asked just in time, never more than the collector can take, and of
every actor in turn. Plus one real local run whose meta.jsonl must hold every actor's
episodes in proportion."""

import json
from collections import Counter
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from gdi.runtime.backends.base import ActorTurns
from gdi.runtime.driver import LEAD_STEPS, AskAhead, drive
from gdi.runtime.wiring import train
from gdi.runtime_config import ReplayConfig
from tests.runtime.helpers import tiny_config
from tests.tolerance import assert_close


@dataclass
class FakeWindow:
    actor_id: int
    frames: int
    phase_seconds: dict = field(default_factory=dict)


class FakeCollector:
    """Counts sequences and their uses left as the real collector does: ``room`` come per
    window, ``batch_size`` uses go per learner step, a sequence leaves after ``replay``."""

    def __init__(self, replay: ReplayConfig) -> None:
        self.replay = replay
        self.uses: list[int] = []

    def __len__(self) -> int:
        return len(self.uses)

    @property
    def free_slots(self) -> int:
        return self.replay.replay_capacity - len(self.uses)

    def add(self, sequences: int) -> None:
        assert sequences <= self.free_slots, "the driver asked for more than fits"
        self.uses += [self.replay.replay] * sequences

    def ready(self) -> bool:
        return len(self.uses) >= self.replay.min_replay

    def step(self) -> None:
        for i in range(self.replay.batch_size):  # the oldest, for simplicity
            self.uses[i] -= 1
        self.uses = [u for u in self.uses if u > 0]


class FakeTrainer:
    """What ``drive`` reads of a Trainer: its budget (frames), its replay's sizes, its parts."""

    def __init__(self, config) -> None:
        self.budget = config.frames
        self.replay = ReplayConfig(batch_size=config.batch_size, replay=config.replay,
                                   replay_capacity=config.replay_capacity,
                                   min_replay=config.min_replay)
        self.sequences_per_window = config.envs_per_actor
        self.collector = FakeCollector(self.replay)
        self.turns = ActorTurns(config.num_actors)
        self.frames = 0
        self.steps = 0
        self.messages: list[str] = []
        self.actor_restarts = 0
        self.windows: Counter = Counter()

    def add_time(self, phase, seconds) -> None:
        pass

    def warn(self, *messages: str) -> None:
        self.messages += messages

    def count_actor_restarts(self, restarts: int) -> None:
        self.actor_restarts += restarts

    def take_window(self, window: FakeWindow) -> None:
        self.frames += window.frames
        self.windows[window.actor_id] += 1
        self.collector.add(self.sequences_per_window)

    def train_while_ready(self, before_step) -> int:
        done = 0
        while self.collector.ready():
            before_step()
            self.collector.step()
            self.steps += 1
            done += 1
        return done

    def periodic(self) -> None:
        pass

    def checkpoint_due(self) -> bool:
        return False


@dataclass
class FakeBackend:
    """Actors with no processes: actor i's window arrives ``delays[i]`` receives after it was
    asked for (1: at the next receive, as the inline backend does)."""

    num_actors: int
    delays: list[int]
    frames_per_window: int
    acting_s: float = 0.0  # what each window reports its actor spent acting it (seconds)
    in_turn: bool = False  # actors take turns with the learner, as the inline backend's
    restarts: int = 0
    owed: dict = field(default_factory=dict)  # actor → receives left
    most_in_flight: int = 0

    @property
    def parallel_actors(self) -> int:
        return 1 if self.in_turn else self.num_actors

    @property
    def in_flight(self) -> int:
        return len(self.owed)

    def idle_actors(self) -> list[int]:
        return [i for i in range(self.num_actors) if i not in self.owed]

    def request(self, actor_id: int) -> None:
        assert actor_id not in self.owed, "asked an actor that already owes a window"
        self.owed[actor_id] = self.delays[actor_id]
        self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def receive(self, block: bool) -> list[FakeWindow]:
        for i in self.owed:
            self.owed[i] -= 1
        arrived = sorted(i for i, left in self.owed.items() if left <= 0)
        for i in arrived:
            del self.owed[i]
        return [FakeWindow(i, self.frames_per_window, {"env": self.acting_s, "idle": 1.0})
                for i in arrived]

    def take_warnings(self) -> list[str]:
        return []


def fake_config(num_actors: int, **changes):
    # The MinAtar preset's shape: 32 sequences per window, 16 per batch, each trained twice.
    values = dict(num_actors=num_actors, envs_per_actor=32, batch_size=16, replay=2,
                  min_replay=64, replay_capacity=512, frames=320 * 400)
    values.update(changes)
    return SimpleNamespace(**values)


@pytest.mark.parametrize("num_actors", [2, 5])
def test_every_actor_is_asked_in_turn_after_warm_up(num_actors):
    config = fake_config(num_actors)
    trainer = FakeTrainer(config)
    backend = FakeBackend(num_actors, delays=[1] * num_actors, frames_per_window=320)
    drive(trainer, backend, stop=lambda frames: False, report=lambda: None,
          sequences_per_window=config.envs_per_actor)
    counts = [trainer.windows[i] for i in range(num_actors)]
    # 400 windows in all: each actor acted its share, give or take one.
    assert sum(counts) == 400 and max(counts) - min(counts) <= 1, counts
    # Just in time: after warm-up at most the lead's worth of windows is ever in flight.
    lead = LEAD_STEPS * -(-config.batch_size // config.replay)
    assert backend.most_in_flight <= -(-(config.min_replay + lead) // config.envs_per_actor)


def test_a_slow_actor_acts_its_windows_and_the_others_take_up_the_rest():
    # Actor 1's windows take three receives to arrive; the idle actors are asked meanwhile.
    config = fake_config(3)
    trainer = FakeTrainer(config)
    backend = FakeBackend(3, delays=[1, 3, 1], frames_per_window=320)
    drive(trainer, backend, stop=lambda frames: False, report=lambda: None,
          sequences_per_window=config.envs_per_actor)
    counts = [trainer.windows[i] for i in range(3)]
    assert all(c >= 400 // 3 // 3 for c in counts), counts  # nobody stands still
    assert counts[0] >= counts[1] and counts[2] >= counts[1], counts


def test_the_lead_covers_a_window_that_takes_longer_than_learner_steps():
    ahead = AskAhead()
    assert ahead.steps == LEAD_STEPS  # nothing measured yet
    ahead.stepped(4, 0.92)  # 0.23 s per learner step
    assert ahead.steps == LEAD_STEPS
    ahead.arrived({"inference": 5.0, "env": 1.0, "idle": 30.0})  # idle is not acting
    assert_close(ahead.window_s, 6.0)
    assert ahead.steps == 28  # ⌈6 / 0.23⌉ = 27, plus one
    ahead.arrived({"env": 1.0})  # moving average: 6 + 0.2·(1 − 6) = 5
    assert_close(ahead.window_s, 5.0)
    assert ahead.steps == 23  # ⌈5 / 0.23⌉ = 22, plus one
    ahead.stepped(0, 0.0)  # no step: nothing learned about the step's time
    assert_close(ahead.step_s, 0.23)
    ahead.stepped(1, 50.0)  # 0.23 + 0.2·(50 − 0.23) ≈ 10.2 s: slower than a window
    assert ahead.steps == LEAD_STEPS


@pytest.mark.parametrize(("acting_s", "in_turn", "most_in_flight"),
                         [(0.0, False, 3), (1e-9, False, 3), (60.0, False, 8),
                          (60.0, True, 3)])
def test_actors_are_asked_further_ahead_when_windows_take_longer_than_steps(
        acting_s, in_turn, most_in_flight):
    # Eight actors, windows arriving at the next receive. Windows that take no time to act
    # (none measured, or a nanosecond: shorter than a learner step) are asked just in time
    # (the lead of LEAD_STEPS: at most three in flight); windows that
    # take a minute, against learner steps of microseconds, are asked of every actor at once,
    # unless the actors take turns with the learner (inline: the lead never reads the clock).
    config = fake_config(8)
    trainer = FakeTrainer(config)
    backend = FakeBackend(8, delays=[1] * 8, frames_per_window=320, acting_s=acting_s,
                          in_turn=in_turn)
    drive(trainer, backend, stop=lambda frames: False, report=lambda: None,
          sequences_per_window=config.envs_per_actor)
    assert backend.most_in_flight == most_in_flight


def test_turns_go_to_the_actor_asked_least_recently_and_survive_a_checkpoint():
    turns = ActorTurns(3)
    assert [turns.next([0, 1, 2]), turns.next([1, 2]), turns.next([0, 2])] == [0, 1, 2]
    assert turns.next([0, 1, 2]) == 0  # asked longest ago
    restored = ActorTurns(3)
    restored.load_state_dict(turns.state_dict())
    assert restored.next([0, 1, 2]) == turns.next([0, 1, 2]) == 1


def test_every_local_actor_contributes_episodes_in_proportion(tmp_path):
    # Windows of 8 sequences against a lead of 4: one window in flight at a time after
    # warm-up, the case in which actor 1 used to act nothing more (issue 30, item 7).
    config = tiny_config(frames=4000, backend="local", num_actors=2, envs_per_actor=8,
                         eval_every=0)
    result = train(config, tmp_path / "run", show_progress=False, tensorboard=False)
    meta = [json.loads(line) for line in (result.run_dir / "meta.jsonl").read_text()
            .splitlines()]
    late = Counter(row["actor"] for row in meta if row["frames"] > 2000)
    assert set(late) == {0, 1}, late
    assert min(late.values()) >= 0.2 * sum(late.values()), late  # before: actor 0 only
