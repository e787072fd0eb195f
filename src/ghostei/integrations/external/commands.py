"""The adb shell commands that carry out an action on a phone, as a program would send them.

For scripted reference programs (the tests' and the benchmark's replay of an in-process agent)
and for readers who want to know what a step of theirs is: each command line here is one step
on a served phone, except typing into a field the action also taps (two: the tap, then the
text). Text beyond ASCII is typed through ADBKeyboard's broadcast, as ``input text`` cannot.
"""

from __future__ import annotations

import shlex

from ...actions import Action
from ...apps import app_by_label

# Actions that end an agent's turn: a program just exits (or calls the MCP tool).
_TERMINAL = frozenset({"finish", "answer", "refuse", "status", "ask_user"})
_KEYS = {"keyboard_enter": 66, "navigate_back": 4, "navigate_home": 3}


def adb_commands(action: Action) -> list[str]:
    """The device shell command lines (for ``adb shell``) that carry out ``action``; none for
    a terminal action. Raises ValueError for an action that has no such command here (one
    aimed at an element index rather than a point, a scroll, ...)."""
    kind = action.action_type
    if kind in _TERMINAL:
        return []
    if kind in _KEYS:
        return [f"input keyevent {_KEYS[kind]}"]
    if kind == "open_app" and action.app_name:
        package = app_by_label(action.app_name).package
        return [f"monkey -p {package} -c android.intent.category.LAUNCHER 1"]
    if kind == "click" and action.x is not None:
        return [f"input tap {action.x} {action.y}"]
    if kind == "long_press" and action.x is not None:
        return [f"input swipe {action.x} {action.y} {action.x} {action.y} 1000"]
    if kind == "input_text" and action.text is not None and action.index is None:
        tap = [] if action.x is None else [f"input tap {action.x} {action.y}"]
        if not all(32 <= ord(ch) < 127 for ch in action.text):
            # ``input text`` types only what the virtual keyboard's key map has (ASCII):
            # other text goes through ADBKeyboard's broadcast, as phone agents send it.
            message = shlex.quote(action.text)
            return [*tap, f"am broadcast -a ADB_INPUT_TEXT --es msg {message}"]
        # InputShellCommand: %s stands for a space; the device shell must see one word.
        return [*tap, "input text " + shlex.quote(action.text.replace(" ", "%s"))]
    raise ValueError(f"no adb command here for {action.model_dump(exclude_none=True)}")
