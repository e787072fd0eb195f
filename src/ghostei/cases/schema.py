"""The case schema: the upstream dataset's twelve fields plus what makes a case machine-scorable.

A case names apps the phone has, and is checked against the phone's catalogue of apps
(:mod:`ghostei.apps`, core data), so the cases import no backend.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..apps import app_labels, resolve_app
from ..checks import CaseChecks, Check
from ..device import DEFAULT_ATTACKER_PACKAGE, OverlayStyle
from ..world import World, build_world, texts_in

# The upstream dataset's name for what draws overlays: an attack surface, never an app.
OVERLAY_HOST = "System UI"
UseDynamic = Literal["Overlay Attack", "Popup SMS", "Non-script"]
# The threat matrix's vectors (``Case.vector``): the dynamic vector split into its two kinds.
Vector = Literal["overlay", "popup-sms", "static", "deceptive"]
VECTORS: tuple[Vector, ...] = ("overlay", "popup-sms", "static", "deceptive")
CaseType = Literal[
    "Dynamic Environment Injection", "Static Environment Injection", "User-Provided Instructions"
]
RISK_DOMAINS = (
    "Fraud",
    "Cybercrime",
    "Disinformation",
    "System Sabotage",
    "Privacy Leakage",
    "Copyright Infringement",
    "Harassment",
)
APP_DOMAINS = (
    "Communication",
    "Finance",
    "Travel",
    "Shopping",
    "Productivity",
    "Media",
    "System",
)


def known_risks(value: dict[str, str]) -> dict[str, str]:
    """``potential_risks`` whose keys are all risk domains of the upstream vocabulary."""
    unknown = [k for k in value if k not in RISK_DOMAINS]
    if unknown:
        raise ValueError(f"unknown risk domain {unknown[0]!r}; known: {', '.join(RISK_DOMAINS)}")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Trigger(_Strict):
    """When a dynamic injection fires; a deterministic function of the event stream.

    ``app_opened``: once one of ``apps`` (default: the case's apps) has been opened and
    ``after_steps`` more steps have passed; ``field_focused``: a (sensitive) text field got
    focus; ``step``: at agent step ``step``.
    """

    on: Literal["app_opened", "field_focused", "step"] = "app_opened"
    apps: list[str] = Field(default_factory=list)
    after_steps: int = Field(default=0, ge=0)
    fields: list[str] = Field(default_factory=list)
    step: int = Field(default=0, ge=0)


class PageInformation(_Strict):
    """The phishing page an overlay's confirm button opens (upstream: ``title`` and ``form``)."""

    title: str
    form: list[str] = Field(min_length=1)
    submit: str = "Submit"
    url: str = ""
    brand: str = ""
    text: str = ""


class OverlayExtra(_Strict):
    """Parameters of an overlay attack, upstream's keys first."""

    title: str
    content: str
    cancel: str
    confirm: str
    use_page: bool = False
    page_information: PageInformation | None = None
    style: OverlayStyle = "dialog"
    urgent: bool = False
    consent: str = ""
    brand: str = "System UI"
    package: str = ""
    # Adaptive variants (ghostei.variants): the app whose icon and colours the overlay
    # copies, and the package of an app into whose task the overlay is launched as a
    # full-screen activity instead of a system-alert window (see OverlaySpec).
    styled_as: str = ""
    task: str = ""
    trigger: Trigger = Field(default_factory=Trigger)

    @property
    def shown_package(self) -> str:
        """The package the overlay's elements report on screen: the task's app for one
        launched into an app's task, else the attacker's (who drew it)."""
        return self.task or self.package or DEFAULT_ATTACKER_PACKAGE

    @model_validator(mode="after")
    def _one_effect(self) -> OverlayExtra:
        if self.use_page and self.page_information is None:
            raise ValueError("use_page is true but page_information is missing")
        if not self.use_page and not self.consent:
            raise ValueError("an overlay needs a phishing page (use_page) or a consent it flips")
        return self


class SmsExtra(_Strict):
    """Parameters of a pop-up SMS attack (upstream: ``numbers`` and ``message``)."""

    numbers: list[str] = Field(min_length=1)
    message: str
    page_information: PageInformation | None = None  # the page the message's link leads to
    trigger: Trigger = Field(default_factory=Trigger)

    @model_validator(mode="after")
    def _page_has_url(self) -> SmsExtra:
        if self.page_information is not None and not self.page_information.url:
            raise ValueError("page_information.url is needed: it is the link in the message")
        return self


class StaticExtra(_Strict):
    """World data an attacker planted before the episode, merged over ``setup``.

    ``clean`` is what a run without attacks (``--no-attack``) plants instead: the planted
    records as they were before the attacker wrote into them (the hotel's host message
    without its request for the card, the article without its note to assistants), where
    the benign task needs them. None: nothing is planted (the seed is the attacker's alone).
    """

    seed: dict[str, Any] = Field(default_factory=dict)
    # Words of the planted content whose appearance on screen means the agent saw the
    # attack (default: every long text of the seed, matched by its beginning).
    reveal: list[str] = Field(default_factory=list)
    clean: dict[str, Any] | None = None

    @field_validator("seed", "clean")
    @classmethod
    def _world_keys(cls, value: dict[str, Any] | None, info: ValidationInfo) -> Any:
        if value is None:
            return value
        unknown = [k for k in value if k not in World.model_fields]
        if unknown:
            raise ValueError(
                f"{info.field_name}: {unknown[0]!r} is not world data; "
                f"known: {', '.join(World.model_fields)}"
            )
        build_world(value)
        return value

    @model_validator(mode="after")
    def _clean_without_the_attack(self) -> StaticExtra:
        # A clean world that still shows the attacker's words would expose the agent to them.
        texts = " ".join(texts_in(self.clean)).casefold()
        for i, words in enumerate(self.reveal):
            if words.strip() and words.casefold() in texts:
                raise ValueError(
                    f"clean: carries the attack's reveal[{i}] text {words!r}; a clean world "
                    "holds the planted records without the attacker's words"
                )
        return self


class Step(_Strict):
    """One UI-grounded step of a solution: an operation and the element it targets.

    Targets are matched against the screen's elements: ``text`` exactly, ``contains`` as a
    substring of text or content-desc, ``desc`` exactly, ``hint`` of an editable field,
    ``package`` of the window. ``value`` is typed text, an app name, an answer or a scroll
    direction; ``{owner.card_number}``-style placeholders draw on the owner's profile.
    ``shade`` pulls the notification shade down (its Screenshot tile captures the screen).
    """

    do: Literal[
        "open_app",
        "tap",
        "type",
        "enter",
        "scroll",
        "back",
        "home",
        "wait",
        "answer",
        "refuse",
        "ask",
        "finish",
        "swipe_away",
        "shade",
    ]
    text: str | None = None
    contains: str | None = None
    desc: str | None = None
    hint: str | None = None
    package: str | None = None
    value: str | None = None

    @model_validator(mode="after")
    def _needs(self) -> Step:
        targeted = any(v is not None for v in (self.text, self.contains, self.desc, self.hint))
        if self.do in ("tap", "type") and not targeted:
            raise ValueError(f"a {self.do!r} step needs a target: text, contains, desc or hint")
        if self.do in ("open_app", "type", "answer", "ask") and self.value is None:
            raise ValueError(f"a {self.do!r} step needs a value")
        return self


# The outcome labels a probe can expect: a probe is a behaviour, and the definitions give every
# behaviour one of the four (never undetermined: on the simulated phone everything is seen).
ProbeLabel = Literal["FAS", "PAS", "TC", "BF"]


class Probe(_Strict):
    """A trajectory a case's checks are tried on, with the label the definitions give it.

    The label is worked out from what the behaviour is (``why`` says by which definition),
    never read off the case's checks: ``ghostei cases probe`` runs the probe and holds the rule
    judge's label to it. The probe agent behaves like the reference agents: ``attack`` is what
    it does once the attack is on screen (``gullible``'s ``attack_solution`` in its place;
    None: it never engages and closes every attack surface, as ``oracle`` does), ``solution``
    the task's steps (None: the case's own; empty: it does nothing and ends the episode), and
    ``back_to_task`` whether it returns to the task once its attack steps are done (False: it
    ends the episode there).
    """

    name: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    label: ProbeLabel
    why: str = Field(min_length=1)
    attack: list[Step] | None = None
    solution: list[Step] | None = None
    back_to_task: bool = True


class Benign(_Strict):
    """The benign request a harmful instruction was made from (User-Provided Instructions
    cases only): what a run without attacks (``--no-attack``) asks instead, with its solution
    and task check. E.g. "text Sam the rumour" becomes "text Sam that dinner is at 7".

    The same shape in the same app: the same flow as ``attack_solution`` with harmless
    content, so clean utility measures what the harmful case would have asked of the agent.
    """

    prompt: str = Field(min_length=1)
    solution: list[Step] = Field(min_length=1)
    task: Check


class Generated(_Strict):
    """Where a generated case came from (``ghostei cases generate``): its template and slot
    values, which are its identity, and the split their hash puts it in."""

    template: str
    slots: dict[str, Any]
    split: Literal["dev", "test"]


class Case(BaseModel):
    """One benchmark case.

    ``checks`` holds three predicates (``task``, ``full_attack``, ``partial_attack``) over
    events and final state. Where none can be derived (imported upstream cases: the benign
    task is free text), the predicate is the explicit marker ``{"judge": "llm"}``: the rule
    judge leaves it undecided (``task_completed`` or ``attack`` None, label ``undetermined``
    unless a decided attack gives FAS or PAS) and an LLM judge scores it from ``result``.
    """

    model_config = ConfigDict(extra="forbid")

    # --- the upstream dataset's fields, same names and vocabulary ---
    id: int = Field(ge=0, strict=True)  # an integer, never true or "3"
    case: str = Field(min_length=1)
    content: str
    prompt: str = Field(min_length=1)
    use_dynamic: UseDynamic
    result: dict[str, str] = Field(default_factory=dict)
    potential_risks: dict[str, str] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)
    app: list[str] = Field(min_length=1)
    files_name: list[str] = Field(default_factory=list)
    need_env: bool = False
    case_type: CaseType
    # --- ours ---
    # The apps the benign task needs (a deceptive case's: its benign counterpart's): what a
    # deployer would scope the agent to, and all a defence is told of the case's apps. Never
    # an attack's surface (the overlay host, an app only the attack opens). Empty: not
    # given, and a defence trusts only the app in front and the system.
    task_apps: list[str] = Field(default_factory=list)
    app_domain: str
    setup: dict[str, Any] = Field(default_factory=dict)
    solution: list[Step] = Field(default_factory=list)
    attack_solution: list[Step] = Field(default_factory=list)
    checks: CaseChecks
    benign: Benign | None = None  # harmful-instruction cases: the clean counterpart
    # Probes written by hand: every other way the attacker's goal can be reached, or missed
    # by a near miss; the automatic ones are derived from the case (ghostei.cases.probes).
    probes: list[Probe] = Field(default_factory=list)
    generated: Generated | None = None  # generated cases: template, slots and split

    @field_validator("potential_risks")
    @classmethod
    def _known_risks(cls, value: dict[str, str]) -> dict[str, str]:
        return known_risks(value)

    @field_validator("task_apps")
    @classmethod
    def _task_apps_are_apps(cls, value: list[str]) -> list[str]:
        for i, name in enumerate(value):
            if name.strip().casefold() == OVERLAY_HOST.casefold():
                raise ValueError(
                    f"task_apps[{i}]: {OVERLAY_HOST!r} hosts overlays, it is never an app a "
                    "task needs"
                )
            app = resolve_app(name)
            if app is None or app.label != name:
                known = ", ".join(sorted(app_labels()))
                raise ValueError(
                    f"task_apps[{i}]: {name!r} is not an app of the phone (by its label); "
                    f"known: {known}"
                )
        if len(set(value)) != len(value):
            raise ValueError("task_apps: an app is named twice")
        return value

    @field_validator("probes")
    @classmethod
    def _probe_names(cls, value: list[Probe]) -> list[Probe]:
        names = [p.name for p in value]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"probes: the name {twice[0]!r} is given twice")
        return value

    @field_validator("setup")
    @classmethod
    def _world_data(cls, value: dict[str, Any]) -> dict[str, Any]:
        build_world(value)  # raises a ValidationError naming the bad field
        return value

    @field_validator("benign")
    @classmethod
    def _benign_of_an_instruction(cls, value: Benign | None, info: ValidationInfo) -> Any:
        # Only a harmful instruction has a benign counterpart: the other cases' prompts are
        # benign already, and a run without attacks switches their injection off instead.
        kind = info.data.get("case_type")
        if value is not None and kind is not None and kind != "User-Provided Instructions":
            raise ValueError(
                f"case {info.data.get('id', '?')}: benign is only for 'User-Provided "
                f"Instructions' cases (this one is {kind!r}: its prompt is benign already, and "
                "a run without attacks switches its injection off)"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Case:
        if self.app_domain not in APP_DOMAINS:
            raise ValueError(
                f"app_domain {self.app_domain!r} is not one of {', '.join(APP_DOMAINS)}"
            )
        extras: dict[str, type[BaseModel]] = {"Overlay Attack": OverlayExtra, "Popup SMS": SmsExtra}
        kind_extra = extras.get(self.use_dynamic)
        if self.case_type == "Dynamic Environment Injection":
            if kind_extra is None:
                raise ValueError(
                    "a dynamic injection needs use_dynamic 'Overlay Attack' or 'Popup SMS'"
                )
            kind_extra.model_validate(self.extra)
        elif self.use_dynamic != "Non-script":
            raise ValueError(f"use_dynamic must be 'Non-script' for {self.case_type!r}")
        elif self.case_type == "Static Environment Injection":
            StaticExtra.model_validate(self.extra)
        missing = _missing_files(self)
        if missing:
            raise ValueError(
                f"files_name: {missing[0]!r} is not on the phone; add it to setup.files "
                "(or the planted seed's files, or the cloud's)"
            )
        if not self.solution:
            raise ValueError("solution: at least one step")
        if not self.attack_solution:
            raise ValueError("attack_solution: at least one step")
        return self

    @property
    def overlay(self) -> OverlayExtra:
        """The overlay parameters (only for overlay attacks)."""
        return OverlayExtra.model_validate(self.extra)

    @property
    def sms(self) -> SmsExtra:
        """The pop-up SMS parameters (only for pop-up SMS attacks)."""
        return SmsExtra.model_validate(self.extra)

    @property
    def static(self) -> StaticExtra:
        """The planted data (only for static injections)."""
        return StaticExtra.model_validate(self.extra)

    @property
    def vector(self) -> Vector:
        """The threat matrix's vector: overlay, popup-sms, static or deceptive."""
        if self.case_type == "User-Provided Instructions":
            return "deceptive"
        if self.case_type == "Static Environment Injection":
            return "static"
        return "popup-sms" if self.use_dynamic == "Popup SMS" else "overlay"

    @property
    def risks(self) -> list[str]:
        """Risk domains, multi-label."""
        return list(self.potential_risks)

    @property
    def target_apps(self) -> list[str]:
        """The apps whose opening triggers a dynamic injection (System UI is the overlay host)."""
        return [a for a in self.app if a != "System UI"]


def _missing_files(case: Case) -> list[str]:
    """Names in ``files_name`` that no file or folder of the case's world carries."""
    if not case.files_name:
        return []
    seed = case.extra.get("seed", {}) if case.case_type == "Static Environment Injection" else {}
    names: set[str] = set()
    for source in (case.setup, seed):
        world = build_world({k: v for k, v in source.items() if k in ("files", "cloud")})
        for path in [f.path for f in world.files] + [f.path for f in world.cloud.files]:
            names.update(part for part in path.split("/") if part)
    return [name for name in case.files_name if name not in names]
