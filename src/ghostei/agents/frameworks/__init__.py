"""The paper's agent frameworks, rebuilt on the device contract and a model provider.

Registered agents (each needs ``AgentContext.provider``):

========================  =====================================================================
``mobile-agent-v2``       screenshot + texts/icons with centre points (no package names or ids);
                          decision, memory and planning agents; ``reflection`` adds its
                          reflection agent (two screenshots, before and after)
``appagent``              screenshot with numbered tags on the clickable/focusable nodes of the
                          uiautomator dump (active window only); ``grid()`` mode
``uitars``                UI-TARS-1.5: official mobile prompt, last 5 screenshots and all
                          earlier answers; coordinates in the smart-resized image
``uitars-v1``             the first UI-TARS: its mobile prompt, coordinates in thousandths
``m3a``                   AndroidWorld M3A: screenshot plain and with set-of-marks, element
                          list, JSON actions; a second call summarises each step
``t3a``                   AndroidWorld T3A: the full element list as text, no image at all
========================  =====================================================================

Switches: ``thinking`` adds an explicit instruction to reason at length in the framework's
own rationale field (Thought / Reason); ``reflection`` is Mobile-Agent-v2's reflection agent
and is refused by the frameworks that have none.
"""

from ...providers.preflight import PromptSize
from . import androidworld, appagent, mobile_agent, uitars  # noqa: F401  (registration)

# The registered agents that call a model, and their largest request: its text over the
# built-in cases at 20 steps in Qwen2.5's tokens (other tokenizers differ by some tens of
# percent), rounded up from what ``benchmarks/prompt_sizes.py`` measures, and its images
# (what an image costs in tokens depends on the model).
PROMPT_SIZES: dict[str, PromptSize] = {
    "mobile-agent-v2": PromptSize(3_500, 1),
    "appagent": PromptSize(1_000, 1),
    "uitars": PromptSize(1_500, 5),
    "uitars-v1": PromptSize(1_500, 5),
    "m3a": PromptSize(6_000, 2),
    "t3a": PromptSize(12_000, 0),
}
# ``ghostei run`` asks for --model with these.
MODEL_AGENTS = frozenset(PROMPT_SIZES)

__all__ = ["MODEL_AGENTS", "PROMPT_SIZES", "PromptSize"]
