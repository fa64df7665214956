"""The SAME_STEP contract of ``gdi.envs``, checked step by step (shared by the tests of every kind),
and a rollout helper that records what a reference implementation is compared against."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def check_step(env, step_out) -> None:
    """Dtypes, shapes and the ``final_obs`` / ``_final_obs`` rules of one ``step`` result."""
    obs, reward, terminated, truncated, info = step_out
    n = env.num_envs
    assert obs.shape == (n, *env.single_observation_space.shape)
    assert obs.dtype == env.single_observation_space.dtype
    assert env.observation_space.contains(obs)
    assert reward.dtype == np.float32 and reward.shape == (n,)
    assert terminated.dtype == np.bool_ and terminated.shape == (n,)
    assert truncated.dtype == np.bool_ and truncated.shape == (n,)
    assert not (terminated & truncated).any(), "an episode is either terminated or truncated"
    ended = terminated | truncated
    if ended.any():
        assert info["final_obs"].shape == obs.shape
        assert info["final_obs"].dtype == obs.dtype
        np.testing.assert_array_equal(info["_final_obs"], ended)
    else:
        assert "final_obs" not in info and "_final_obs" not in info


@dataclass
class Rollout:
    """Per step: the observation the action was taken in, the action, and the step's outputs."""

    obs: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    rewards: list[np.ndarray] = field(default_factory=list)
    terminated: list[np.ndarray] = field(default_factory=list)
    truncated: list[np.ndarray] = field(default_factory=list)
    final_obs: list[np.ndarray | None] = field(default_factory=list)
    infos: list[dict] = field(default_factory=list)

    def column(self, i: int):
        """Environment ``i``'s stream as (obs_t, a_t, r_t, term_t, trunc_t, final_obs_t)."""
        for t in range(len(self.actions)):
            final = self.final_obs[t]
            yield (
                self.obs[t][i],
                int(self.actions[t][i]),
                float(self.rewards[t][i]),
                bool(self.terminated[t][i]),
                bool(self.truncated[t][i]),
                None
                if final is None or not (self.terminated[t][i] or self.truncated[t][i])
                else final[i],
            )


def rollout(env, steps: int, action_seed: int, seed: int | None = None) -> Rollout:
    """Reset (with ``seed`` if given), then ``steps`` uniformly random actions, checking every
    step against :func:`check_step`."""
    rng = np.random.default_rng(action_seed)
    obs, _ = env.reset(seed=seed)
    out = Rollout()
    for _ in range(steps):
        actions = rng.integers(0, env.single_action_space.n, env.num_envs, dtype=np.int64)
        step = env.step(actions)
        check_step(env, step)
        out.obs.append(obs)
        out.actions.append(actions)
        obs, reward, terminated, truncated, info = step
        out.rewards.append(reward)
        out.terminated.append(terminated)
        out.truncated.append(truncated)
        out.final_obs.append(info.get("final_obs"))
        out.infos.append(info)
    out.obs.append(obs)
    return out


def assert_same_rollout(a: Rollout, b: Rollout) -> None:
    for name in ("obs", "rewards", "terminated", "truncated"):
        for t, (x, y) in enumerate(zip(getattr(a, name), getattr(b, name), strict=True)):
            np.testing.assert_array_equal(x, y, err_msg=f"{name} differ at step {t}")
    for t, (x, y) in enumerate(zip(a.final_obs, b.final_obs, strict=True)):
        assert (x is None) == (y is None), f"final_obs present in one rollout only at step {t}"
        if x is not None:
            np.testing.assert_array_equal(x, y, err_msg=f"final_obs differ at step {t}")


def assert_matches_reference(ours: Rollout, i: int, reference) -> None:
    """Environment ``i`` of ``ours`` against a single-environment ``reference`` with methods
    ``reset() -> obs``, ``step(a) -> (obs, r, term, trunc)`` (no autoreset) and
    ``reset_next() -> obs`` (the reset that starts the next episode)."""
    expected_obs = reference.reset()
    for t, (obs, action, reward, term, trunc, final) in enumerate(ours.column(i)):
        np.testing.assert_array_equal(obs, expected_obs, err_msg=f"env {i} obs at step {t}")
        ref_obs, ref_reward, ref_term, ref_trunc = reference.step(action)
        assert (reward, term, trunc) == (ref_reward, ref_term, ref_trunc), f"env {i} step {t}"
        if term or trunc:
            # The final transition's observation goes to info; obs starts the next episode.
            np.testing.assert_array_equal(final, ref_obs, err_msg=f"env {i} final_obs {t}")
            expected_obs = reference.reset_next()
        else:
            assert final is None
            expected_obs = ref_obs
    np.testing.assert_array_equal(ours.obs[-1][i], expected_obs)
