import numpy as np

import gdi


class Curve(gdi.Callback):
    """Keeps the training curve and the evaluations, and stops the run once the training
    episodes of a metrics row average ``target``."""

    def __init__(self, target: float) -> None:
        self.target = target
        self.rows: list[tuple[int, float]] = []  # (frames, mean return of the row's episodes)
        self.evaluations: list[float] = []

    def on_log(self, row):
        if "charts/episodic_return" in row:  # only when episodes ended since the last row
            self.rows.append((row["frames"], row["charts/episodic_return"]))
            if row["charts/episodic_return"] >= self.target:
                self.stop_training(f"training episodes average {self.rows[-1][1]:.0f}")

    def on_evaluation(self, evaluation):
        self.evaluations.append(evaluation.mean_return)


curve = Curve(target=100.0)
agent = gdi.train("gdi-i3", env="gym:CartPole-v1", frames=20_000, backend="inline",
                  eval_every=5_000, callbacks=[curve])  # eval_every: a config field, as --set
print(agent)  # <gdi.Agent gdi-i3 on gym:CartPole-v1, 20,000 frames, λ population, runs/…>
print(curve.rows[-3:], curve.evaluations)  # the last rows: (frames, mean training return)

print(agent.evaluate(episodes=4))  # mean return … over 4 episodes: …, …, …, … (at … frames)
obs = np.zeros(4, dtype=np.float32)  # one CartPole observation
action = agent.predict(obs)  # an int, sampled from π_λ
actions = agent.predict(np.stack([obs, obs]), deterministic=True)  # int64 [2], π_λ's mode

bundle = agent.save(f"bundles/{agent.run_dir.name}")  # what `gdi export` writes
print(gdi.load_agent(bundle.path))  # the same network and E, read from the bundle
