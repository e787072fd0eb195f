"""External agents: any program that drives a phone over adb (or MCP) as the agent of a run.

``ghostei run --agent-cmd CMD`` runs :func:`execute_external`: per case a served phone in this
process is reset to the case with its injection armed, ``CMD`` is started with the phone's
serial, the adb server's port and the instruction in its environment, every state-changing
command it sends is a step (triggers tested after each, as in every run), and when it exits
(or at the step limit or the timeout) the rule judge decides, with the simulator's full
observability. See docs/external-agents.md.
"""

from .episode import ProgramEpisode, run_program_episode
from .program import expand_command, name_from_command
from .run import ExternalRunError, check_config, execute_external

__all__ = [
    "ExternalRunError",
    "ProgramEpisode",
    "check_config",
    "execute_external",
    "expand_command",
    "name_from_command",
    "run_program_episode",
]
