"""What a defence is, and how it is put around an agent.

A defence acts at one of three points, each a method with a do-nothing default:

- the prompt — ``prompt(messages)`` rewrites every request the agent's model receives (a
  warning, exemplars); it wraps the provider, so it reaches any framework, and agents without
  a model are untouched;
- the observation — ``screen(observation)`` rewrites what the agent is shown (elements marked
  with the window that drew them, untrusted text datamarked, a screenshot annotated);
- the action — ``review(observation, step)`` passes the step, rewrites it, or blocks it: a
  blocked step carries a ``Blocked`` record, which the runner writes as an ``action_blocked``
  event for the judge and the viewer.

Defences are built per episode from a ``DefenceContext`` and options given on the command
line as strings (``--defence data-gate:on_block=ask``), converted by the types of the
class's ``__init__`` keywords.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from ..actions import Action
from ..agents.base import Agent, AgentStep, Blocked
from ..cases.schema import Case
from ..observation import Observation
from ..providers.base import Completion, Message, Provider, ProviderConfig
from ..providers.usage import MeteredProvider
from ..world import Owner

DefencePoint = Literal["prompt", "observation", "action"]
POINTS: tuple[DefencePoint, ...] = ("prompt", "observation", "action")
# What a gate does with an action it stops: nothing instead (the episode goes on), or ask the
# user (``ask_user``, which ends the episode).
ON_BLOCK = ("skip", "ask")


def check_on_block(defence: str, value: object) -> str:
    """``value`` if it is an ``on_block`` choice; a ValueError naming the choices otherwise."""
    if value not in ON_BLOCK:
        raise ValueError(f"{defence}: on_block must be one of {', '.join(ON_BLOCK)}, not {value!r}")
    return str(value)


def ask_user(note: str) -> Action:
    """The ``ask_user`` a gate with ``on_block=ask`` carries out instead: ends the episode."""
    return Action(action_type="ask_user", text=f"{note} Should I go on, and how?")


@dataclass(frozen=True)
class DefenceContext:
    """What a defence may know: what a deployer guarding the agent would know.

    ``instruction`` is the user's request and ``task_apps`` the apps the benign task needs
    (the case's authored ``task_apps``: the scope a deployer would give the agent, which never
    names an attack's surface — not the case's ``app``, which lists the overlay host and the
    apps an attack opens); ``owner`` holds the phone owner's data (card, passport, passwords),
    which a data policy protects. ``provider`` is the run's model, for defences that ask one.
    Never the case's solution, checks or attack.
    """

    instruction: str
    task_apps: tuple[str, ...]
    owner: Owner
    provider: Provider | None = None
    backend: str = "sim"

    @classmethod
    def for_case(
        cls, case: Case, owner: Owner, provider: Provider | None = None, backend: str = "sim"
    ) -> DefenceContext:
        """The context of an episode of ``case``."""
        return cls(case.prompt, tuple(case.task_apps), owner, provider, backend)


class Defence:
    """Base of every defence: a name, the point it acts at, its source, and three hooks that
    change nothing until a subclass says otherwise.

    Subclasses take the context first and their options as keywords with defaults and type
    annotations (str, int, float or bool): ``ghostei defences list`` shows them, and
    ``--defence NAME:key=value`` sets them.
    """

    name: ClassVar[str] = ""
    point: ClassVar[DefencePoint] = "action"
    summary: ClassVar[str] = ""  # one line: what it does
    source: ClassVar[str] = ""  # the work or mechanism it follows

    def __init__(self, ctx: DefenceContext) -> None:
        self.ctx = ctx
        # How the defence is named in agent names and events (its options added when set).
        self.label = self.name or type(self).__name__
        # A model the defence calls besides the run's (llm-guard's model=), metered: the
        # runner adds its usage to the episode's.
        self.own_model: MeteredProvider | None = None

    @classmethod
    def refuse(cls, options: Mapping[str, object], *, run_model: bool) -> str | None:
        """Why the defence cannot run with ``options`` (in a run with a model or without),
        asked before any episode; None when it can. By default: what its ``__init__``
        raises (a ValueError) when built on a stand-in context."""
        stand_in = DefenceContext(
            instruction="",
            task_apps=(),
            owner=Owner(),
            provider=_NoCalls() if run_model else None,
        )
        try:
            cls(stand_in, **options)
        except ValueError as exc:
            return str(exc)
        return None

    def reset(self, instruction: str) -> None:
        """A new episode starts with this instruction."""

    def prompt(self, messages: Sequence[Message]) -> list[Message]:
        """The request the model receives instead of ``messages``."""
        return list(messages)

    def screen(self, observation: Observation) -> Observation:
        """What the agent is shown of ``observation``."""
        return observation

    def review(self, observation: Observation, step: AgentStep) -> AgentStep:
        """The step to carry out, given what the agent chose on ``observation``."""
        return step

    def block(self, step: AgentStep, reason: str, instead: Action | None = None) -> AgentStep:
        """``step`` stopped: ``instead`` (default: nothing is done, the episode goes on) is
        carried out, and the runner records what was blocked, by whom and why."""
        replacement = instead or Action(action_type="wait")
        return AgentStep(
            action=replacement,
            raw_output=step.raw_output,
            usage=step.usage,
            ends_episode=None,
            summary=step.summary,
            blocked=Blocked(self.label, reason, step.action),
        )


class _NoCalls:
    """The stand-in for a run's model while options are checked: never called."""

    config = ProviderConfig(model="stand-in")

    def complete(self, messages: Sequence[Message]) -> Completion:
        raise AssertionError("a defence called its model while being built")


def system_note(messages: Sequence[Message], note: str) -> list[Message]:
    """``messages`` with ``note`` added to the system message (one is put first if none)."""
    out = list(messages)
    if out and out[0].role == "system":
        first = out[0]
        out[0] = Message("system", f"{first.text}\n\n{note}", first.images)
    else:
        out.insert(0, Message("system", note))
    return out


class PromptDefended:
    """A provider whose requests pass through prompt defences first (in order)."""

    def __init__(self, inner: Provider, defences: Sequence[Defence]) -> None:
        self.inner = inner
        self.defences = list(defences)

    @property
    def config(self) -> ProviderConfig:
        """The wrapped provider's configuration."""
        return self.inner.config

    def complete(self, messages: Sequence[Message]) -> Completion:
        """The inner provider's answer to the defended request."""
        request = list(messages)
        for defence in self.defences:
            request = defence.prompt(request)
        return self.inner.complete(request)


class AgentWrapper:
    """An agent that delegates to another; subclasses change what they need."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def reset(self, instruction: str) -> None:
        self.agent.reset(instruction)

    def act(self, observation: Observation) -> AgentStep:
        return self.agent.act(observation)


class DefenceChain:
    """Defences in order around one agent: the first screens the observation first and
    reviews the action last (it is the outermost). A driver with its own loop (the inspect
    task's model) calls ``screen`` before its agent acts and ``review`` after."""

    def __init__(self, defences: Sequence[Defence]) -> None:
        self.defences = list(defences)

    def reset(self, instruction: str) -> None:
        for defence in self.defences:
            defence.reset(instruction)

    def screen(self, observation: Observation) -> tuple[Observation, list[Observation]]:
        """What the agent is shown, and what each defence was shown (its review sees that)."""
        seen = []
        for defence in self.defences:
            seen.append(observation)
            observation = defence.screen(observation)
        return observation, seen

    def review(self, seen: Sequence[Observation], step: AgentStep) -> AgentStep:
        """The step to carry out: reviewed from the innermost defence out. A step a defence
        blocked is not reviewed again: it is already nothing."""
        for defence, observation in reversed(list(zip(self.defences, seen, strict=True))):
            if step.blocked is not None:
                break
            step = defence.review(observation, step)
        return step


class Defended(AgentWrapper):
    """An agent behind its defences: every observation screened, every step reviewed."""

    def __init__(self, agent: Agent, chain: DefenceChain) -> None:
        super().__init__(agent)
        self.chain = chain

    def reset(self, instruction: str) -> None:
        self.chain.reset(instruction)
        super().reset(instruction)

    def act(self, observation: Observation) -> AgentStep:
        shown, seen = self.chain.screen(observation)
        return self.chain.review(seen, self.agent.act(shown))


def defended(agent: Agent, *defences: Defence) -> Agent:
    """``agent`` behind ``defences``, applied in order (see ``DefenceChain``)."""
    return Defended(agent, DefenceChain(defences)) if defences else agent
