"""What one viewer connection may ask for: the agent cap, the brute-force cap, the pair budget.

``agents.n`` is capped by ``max_agents`` (``flocksim serve --max-agents``), a brute-force
neighbour search by :data:`MAX_BRUTE_AGENTS`; a neighbour search may hold at most ``max_pairs``
pairs (:mod:`flocksim.budgets`, checked by the session). A breach is a
:class:`~flocksim.viewer.controls.ControlError`: one line the client shows.
"""

from __future__ import annotations

from flocksim.config import AnyParams, ConfigError, apply_overrides
from flocksim.scenarios import load_preset
from flocksim.viewer.controls import ControlError, plain_reason, with_followed_count

DEFAULT_MAX_AGENTS = 200_000
"""Default cap on ``agents.n`` per connection."""
DEFAULT_MAX_PAIRS = 10_000_000
"""Default budget of neighbour pairs per search in a viewer's simulation (80 MB of metric list)."""
MAX_BRUTE_AGENTS = 20_000
"""Most agents a viewer's simulation may search by brute force (``neighbors.method = "brute"``:
N^2 distance checks a step)."""


def check_agent_cap(params: AnyParams, max_agents: int) -> None:
    """ControlError naming ``agents.n`` and the allowed range when ``params`` ask for more
    than ``max_agents`` agents, or for a brute-force neighbour search over more than
    :data:`MAX_BRUTE_AGENTS`."""
    n = int(params.agents.n)
    if n > max_agents:
        raise ControlError(
            f"agents.n: {n} is more than this server allows (flocksim serve --max-agents {max_agents}); "
            f"allowed: 0 to {max_agents}; got {n}"
        )
    if params.neighbors.method == "brute" and n > MAX_BRUTE_AGENTS:
        raise ControlError(
            f"neighbors.method: brute force over {n} agents ({n}^2 distance checks a step) is more than this server "
            f"allows; allowed: auto | grid, or brute with at most {MAX_BRUTE_AGENTS} agents"
        )


def params_from_query(preset: str, overrides: list[str], max_agents: int) -> AnyParams:
    """Parameters of ``preset`` with dotted ``overrides`` (as ``flocksim run --set``), within the
    agent cap; ControlError with one line naming the problem otherwise. The description follows
    an ``agents.n`` override (:func:`~flocksim.viewer.controls.follow_count`) unless one sets it."""
    try:
        base = load_preset(preset)
        described = any(item.split("=", 1)[0].strip() == "description" for item in overrides)
        params = with_followed_count(base, apply_overrides(base, overrides), described)
    except ConfigError as exc:
        raise ControlError(str(exc)) from None
    except (ValueError, TypeError, RecursionError) as exc:
        raise ControlError(f"set: invalid override ({plain_reason(exc)})") from None
    check_agent_cap(params, max_agents)
    return params


__all__ = ["DEFAULT_MAX_AGENTS", "DEFAULT_MAX_PAIRS", "MAX_BRUTE_AGENTS", "check_agent_cap", "params_from_query"]
