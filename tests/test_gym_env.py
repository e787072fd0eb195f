"""The Gymnasium environment (the ``gym`` extra): spaces, determinism, rewards, vectorising."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from ghostei.agents import AgentContext, build_agent  # noqa: E402
from ghostei.integrations.gym_env import (  # noqa: E402
    ACTION_TYPES,
    ENV_ID,
    GhostEIEnv,
    _fit,
    encode_action,
    to_action,
)
from ghostei.world import build_world  # noqa: E402

CASE = 1  # an overlay attack: the oracle dismisses it, gullible confirms it


def make(**kwargs: Any) -> Any:
    return gymnasium.make(ENV_ID, case=CASE, **kwargs)


def drive(env: Any, agent_name: str, seed: int = 0) -> tuple[float, dict[str, Any], list[Any]]:
    """Play an episode with a reference agent choosing from the env's own observation.

    Returns the summed reward, the last info and the actions sent."""
    _, info = env.reset(seed=seed)
    raw = env.unwrapped
    case = raw.episode_case
    ctx = AgentContext(
        case=case, seed=seed, max_steps=raw.max_steps, owner=build_world(case.setup).owner
    )
    agent = build_agent(agent_name, ctx)
    agent.reset(info["instruction"])
    total = 0.0
    sent = []
    while True:
        action = encode_action(agent.act(raw.observation).action)
        sent.append(action)
        _, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        if terminated or truncated:
            return total, info, sent


def test_registered_and_checked() -> None:
    env = make()
    try:
        check_env(env.unwrapped, skip_render_check=False)
        assert env.unwrapped.case.id == CASE
        assert env.observation_space["screenshot"].shape == (1200, 540, 3)
    finally:
        env.close()


def test_rendered_and_truncated() -> None:
    env = make(render_mode="rgb_array", max_elements_text=80, max_xml=200)
    try:
        check_env(env.unwrapped, skip_render_check=False)
        obs, _ = env.reset(seed=0)
        frame = env.render()
        assert frame is not None and frame.tobytes() == obs["screenshot"].tobytes()
        for key, limit in (("elements", 80), ("xml", 200)):
            assert len(obs[key]) == limit and obs[key].endswith("\n[truncated]")
        assert obs in env.observation_space
    finally:
        env.close()


def test_texts_fit_their_spaces() -> None:
    env = GhostEIEnv(case=CASE)
    text = _fit("go \U0001f600 now", 100)
    assert text == "go \ufffd now" and text in env.observation_space["xml"]
    assert _fit("x" * 50, 20) == "x" * 8 + "\n[truncated]"
    env.close()


def test_default_case_is_the_first_builtin() -> None:
    env = GhostEIEnv()
    try:
        obs, info = env.reset(seed=0)
        assert info["case"] == 1
        assert obs in env.observation_space
    finally:
        env.close()


def test_reset_is_deterministic() -> None:
    a, b = make(), make()
    try:
        obs_a, _ = a.reset(seed=3)
        obs_b, _ = b.reset(seed=3)
        assert obs_a["screenshot"].tobytes() == obs_b["screenshot"].tobytes()
        assert obs_a["elements"] == obs_b["elements"] and obs_a["xml"] == obs_b["xml"]
        # The same actions: the same events and observations.
        a.action_space.seed(7)
        actions = [a.action_space.sample() for _ in range(3)]
        actions.insert(0, encode_action(to_action({"type": 0, "x": 270, "y": 560})))
        for action in actions:
            out_a = a.step(action)
            out_b = b.step(action)
            assert out_a[4]["events"] == out_b[4]["events"]
            assert out_a[0]["screenshot"].tobytes() == out_b[0]["screenshot"].tobytes()
            assert out_a[0]["xml"] == out_b[0]["xml"]
            assert out_a[1:4] == out_b[1:4]
            if out_a[2] or out_a[3]:
                break
    finally:
        a.close()
        b.close()


def test_oracle_completes_the_task() -> None:
    env = make()
    try:
        total, info, _ = drive(env, "oracle")
        assert info["label"] == "TC"
        assert info["verdict"]["label"] == "TC"
        assert total == pytest.approx(1.0)
    finally:
        env.close()


def test_gullible_complies_and_is_penalised() -> None:
    env = make(attack_penalty=2.0)
    try:
        total, info, _ = drive(env, "gullible")
        assert info["label"] == "FAS"
        assert total == pytest.approx(-2.0)
        fired = [e for e in info["events"] if e["kind"] == "overlay_confirmed"]
        assert fired or info["verdict"]["attack"] == "full"
    finally:
        env.close()


def test_no_attack_condition() -> None:
    env = make(attack="none")
    try:
        total, info, _ = drive(env, "gullible")
        assert info["label"] == "TC" and total == pytest.approx(1.0)
    finally:
        env.close()


def test_truncated_at_max_steps() -> None:
    env = make(max_steps=2)
    try:
        env.reset(seed=0)
        wait = {"type": ACTION_TYPES.index("wait")}
        _, _, terminated, truncated, info = env.step(wait)
        assert not terminated and not truncated and "verdict" not in info
        _, reward, terminated, truncated, info = env.step(wait)
        assert truncated and not terminated
        assert info["label"] == "BF" and reward == 0.0
    finally:
        env.close()


@pytest.mark.parametrize(
    "action",
    [
        {"type": ACTION_TYPES.index("open_app"), "text": "  "},
        {"type": ACTION_TYPES.index("click"), "index": 255, "x": 0, "y": 0},
        {"type": 99},
        {"type": ACTION_TYPES.index("swipe"), "x": 1},
        {"type": ACTION_TYPES.index("click"), "x": 9999, "y": 5},
        "tap the button",
    ],
)
def test_invalid_action_is_recorded(action: Any) -> None:
    env = make()
    try:
        env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.unwrapped.step(action)
        assert info["action"]["action_type"] == "invalid"
        assert [e["kind"] for e in info["events"]] == ["invalid_action"]
        assert not terminated and not truncated and reward == 0.0
        assert obs in env.observation_space
    finally:
        env.close()


def test_actions_round_trip() -> None:
    env = GhostEIEnv(case=CASE)
    try:
        env.reset(seed=0)
        n = len(env.observation.elements)
        for action in [
            to_action({"type": 0, "index": 2}, n),
            to_action({"type": 2, "x": 10, "y": 20, "text": "héllo"}, n),
            to_action({"type": 3, "direction": 1}, n),
            to_action({"type": 4, "x": 1, "y": 2, "x2": 3, "y2": 4}, n),
            to_action({"type": 7, "text": "Booking"}, n),
            to_action({"type": 11}, n),
        ]:
            assert action.action_type != "invalid", action
            sample = encode_action(action)
            assert sample in env.action_space
            assert to_action(sample, n) == action
    finally:
        env.close()


def test_reset_options_switch_case() -> None:
    env = make()
    try:
        _, info = env.reset(seed=0, options={"case": 8})
        assert info["case"] == 8
        _, info = env.reset(seed=0)
        assert info["case"] == 8
    finally:
        env.close()


def test_module_prefixed_id() -> None:
    env = gymnasium.make("ghostei.integrations.gym_env:ghostei/Phone-v0", case=CASE)
    env.close()


def test_the_old_module_is_a_deprecated_alias() -> None:
    sys.modules.pop("ghostei.gym_env", None)
    with pytest.warns(DeprecationWarning, match="ghostei.integrations.gym_env"):
        old = importlib.import_module("ghostei.gym_env")
    assert old.GhostEIEnv is GhostEIEnv and old.ENV_ID == ENV_ID
    assert gymnasium.spec(ENV_ID).entry_point == "ghostei.integrations.gym_env:GhostEIEnv"
    sys.modules.pop("ghostei.gym_env", None)
    with pytest.warns(DeprecationWarning):
        env = gymnasium.make("ghostei.gym_env:ghostei/Phone-v0", case=CASE)
    env.close()


def test_async_vector_env() -> None:
    envs = gymnasium.vector.AsyncVectorEnv(
        [lambda: gymnasium.make(ENV_ID, case=CASE), lambda: gymnasium.make(ENV_ID, case=8)]
    )
    try:
        obs, infos = envs.reset(seed=[0, 0])
        assert obs["screenshot"].shape == (2, 1200, 540, 3)
        assert list(infos["case"]) == [CASE, 8]
        wait = ACTION_TYPES.index("wait")
        answer = ACTION_TYPES.index("answer")
        actions = {
            "type": np.array([wait, answer]),
            "x": np.zeros(2, np.int64),
            "y": np.zeros(2, np.int64),
            "x2": np.zeros(2, np.int64),
            "y2": np.zeros(2, np.int64),
            "text": ("", "done"),
            "direction": np.zeros(2, np.int64),
            "index": np.zeros(2, np.int64),
        }
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        assert not truncated.any()
        assert list(terminated) == [False, True]
        assert infos["label"][1] == "BF" and rewards.shape == (2,)
        assert len(obs["xml"]) == 2 and all(obs["xml"])
        obs, *_ = envs.step(actions)  # env 1 resets
        assert obs["screenshot"].shape == (2, 1200, 540, 3)
    finally:
        envs.close()
