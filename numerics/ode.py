"""Integration of a :class:`theory.flow.ReducedSystem` with ``scipy.integrate.solve_ivp``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from theory.flow import ReducedSystem

__all__ = ["OdeError", "OdeSolution", "integrate"]


class OdeError(RuntimeError):
    """``solve_ivp`` did not reach the end time (and no terminal event stopped it)."""


@dataclass(frozen=True)
class OdeSolution:
    """``t`` [T], ``y`` [d, T]; ``t_event`` is the time a terminal event stopped it (or None)
    and ``y_event`` [d] the state there."""

    t: np.ndarray
    y: np.ndarray
    success: bool
    message: str
    t_event: float | None = None
    y_event: np.ndarray | None = None


def integrate(
    system: ReducedSystem,
    y0: Sequence[float],
    t_end: float,
    values: Mapping[sp.Symbol, float] | None = None,
    *,
    t_eval: Sequence[float] | None = None,
    method: str = "LSODA",
    rtol: float = 1e-10,
    atol: float = 1e-12,
    events: Sequence[Callable[[float, np.ndarray], float]] = (),
) -> OdeSolution:
    """Integrate ``system`` from ``y0`` over [0, t_end] with the lambdified Jacobian.

    ``events`` are terminal: the first zero crossing of any of them stops the integration.
    """
    values = dict(values or {})
    missing = [str(p) for p in system.params if p not in values]
    if missing:
        raise ValueError(f"values needed for parameters {missing}")
    if not t_end > 0:
        raise ValueError(f"t_end must be > 0, got {t_end}")
    args = tuple(float(values[p]) for p in system.params)
    f = system.lambdify("numpy")
    jac = system.lambdify_jacobian("numpy")
    evs = []
    for ev in events:

        def wrapped(t, y, ev=ev):
            return ev(t, y)

        wrapped.terminal = True
        evs.append(wrapped)
    sol = solve_ivp(
        lambda t, y: f(t, y, *args),
        (0.0, float(t_end)),
        np.asarray(y0, dtype=float),
        method=method,
        jac=lambda t, y: jac(t, y, *args),
        t_eval=None if t_eval is None else np.asarray(t_eval, dtype=float),
        rtol=rtol,
        atol=atol,
        events=evs or None,
    )
    # scipy hands back a list, not an array, when a terminal event fires before the first
    # point of t_eval
    sol_t = np.asarray(sol.t, dtype=float)
    if sol.status < 0:  # never hand back a half-integrated path as if it were the solution
        raise OdeError(
            f"integration of {system.name or 'system'} failed at t = "
            f"{float(sol_t[-1]) if sol_t.size else 0.0:.6g} of {float(t_end):.6g}: {sol.message}"
        )
    t_event, y_event = None, None
    if sol.status == 1:
        t_event = float(sol_t[-1]) if sol_t.size else None
        hits = [(te[0], ye[0]) for te, ye in zip(sol.t_events, sol.y_events, strict=True)
                if len(te)]
        if hits:
            te, ye = min(hits, key=lambda h: h[0])
            t_event, y_event = float(te), np.asarray(ye, dtype=float)
    y = np.asarray(sol.y, dtype=float).reshape(np.size(y0), -1)  # [] -> (d, 0), as sol.t
    if sol.status == 1 and t_eval is None:
        # include the state at the event
        y_ev = [ye[0] for ye in sol.y_events if len(ye)]
        if y_ev:
            y = np.concatenate([sol.y, np.asarray(y_ev[0])[:, None]], axis=1)
            t = np.append(sol.t, t_event)
            return OdeSolution(t, y, bool(sol.success), str(sol.message), t_event, y_event)
    return OdeSolution(sol_t, np.asarray(y), bool(sol.success), str(sol.message), t_event,
                       y_event)
