"""``cmd overlay``: the overlay manager, whose overlays here are the navigation bar's.

A device has many runtime resource overlays; the ones clients switch are the three of the
``com.android.internal.navigation_bar_mode`` category, which choose the system navigation
(:mod:`ghostei.sim.navigation`): ``cmd overlay enable-exclusive --category
com.android.internal.systemui.navbar.threebutton`` gives the phone its three-button bar, as it
does an emulator. The phone's mode is their state: the one of its mode is enabled, the others
are not. Disabling the enabled one leaves the framework's own mode, the three-button bar.
Output and exit codes are ``OverlayManagerShellCommand``'s.
"""

from __future__ import annotations

from ..sim import navigation as nav
from .commands import IO, Session

HELP = """Overlay manager (overlay) commands:
  help
    Print this help text.
  list [--user USER_ID] [PACKAGE[:NAME]]
    Print information about target and overlay packages.
    Overlay packages are printed in priority order. With optional
    parameters PACKAGE and NAME, limit output to the specified overlay or
    target.
  enable [--user USER_ID] PACKAGE[:NAME]
    Enable overlay within or owned by PACKAGE with optional unique NAME.
  disable [--user USER_ID] PACKAGE[:NAME]
    Disable overlay within or owned by PACKAGE with optional unique NAME.
  enable-exclusive [--user USER_ID] [--category] PACKAGE
    Enable overlay within or owned by PACKAGE and disable all other overlays
    for its target package. If the --category option is given, only disables
    other overlays in the same category.
  set-priority [--user USER_ID] PACKAGE PARENT|lowest|highest
    Change the priority of the overlay to be just higher than
    the priority of PARENT If PARENT is the special keyword
    'lowest', change priority of PACKAGE to the lowest priority.
    If PARENT is the special keyword 'highest', change priority of
    PACKAGE to the highest priority."""
FAILED = 255  # a shell command's -1


def overlay(session: Session, argv: list[str], io: IO) -> int:
    """cmd overlay list|enable|disable|enable-exclusive|set-priority|help ..."""
    args = argv[1:]
    if not args or args[0] in ("help", "-h"):
        io.print(HELP)
        return FAILED
    sub, rest = args[0], args[1:]
    if sub not in _SUBCOMMANDS:
        io.print(f"Unknown command: {sub}")
        return FAILED
    # --category changes nothing here: every overlay of the target is in the one category.
    flags = {"--category"} if sub == "enable-exclusive" else set()
    while rest and rest[0].startswith("-"):
        opt = rest.pop(0)
        if opt == "--user" and rest:
            rest.pop(0)  # user 0 is the only user
        elif opt not in flags:
            io.error(f"Error: Unknown option: {opt}")
            return 1
    operands = [a.partition(":")[0] for a in rest]  # PACKAGE[:NAME]: ours have no names
    if sub == "list":
        return _list(session, operands[:1], io)
    if not operands or (sub == "set-priority" and len(operands) < 2):
        io.error(f'Error: Argument expected after "{args[-1]}"')
        return FAILED
    mode = nav.from_overlay(operands[0])
    phone = session.phone
    if sub == "set-priority":  # one overlay of the category is enabled at a time: no effect
        return 0 if mode is not None else 1
    if sub == "enable-exclusive":  # setEnabledExclusive(InCategory) answers false: status 1
        if mode is None:
            return 1
        phone.set_navigation(mode)
        return 0
    if mode is None:
        io.error(f"Error: no overlay package {operands[0]} on this phone")
        return FAILED
    if sub == "enable":
        phone.set_navigation(mode)
    elif phone.navigation == mode:  # disable the enabled one: the framework's mode is left
        phone.set_navigation(nav.FRAMEWORK_DEFAULT)
    return 0


_SUBCOMMANDS = ("list", "enable", "disable", "enable-exclusive", "set-priority")


def _list(session: Session, packages: list[str], io: IO) -> int:
    current = session.phone.navigation
    lines = [
        f"[{'x' if mode == current else ' '}] {package}"
        for mode, package in sorted(nav.OVERLAYS.items(), key=lambda item: item[1])
    ]
    if not packages:
        io.print(nav.OVERLAY_TARGET)
        for line in lines:
            io.print(line)
        io.print()
    elif packages[0] == nav.OVERLAY_TARGET:
        io.print(nav.OVERLAY_TARGET)
        for line in lines:
            io.print(line)
    else:  # an overlay prints its own line; any other package, nothing
        for line in lines:
            if line[4:] == packages[0]:
                io.print(line)
    return 0
