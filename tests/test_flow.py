"""The shared symbolic toolkit: ReducedSystem, gradient_flow, integration."""

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from numerics.ode import integrate
from theory.flow import ReducedSystem, classify_matrix, gradient_flow, simplify_zero

x, y, k = sp.symbols("x y k", real=True)


def test_gradient_flow_of_quadratic_has_known_rhs_and_types():
    loss = x**2 - y**2 + k * x * y
    sys = gradient_flow(loss, (x, y), (k,))
    assert sp.simplify(sys.rhs[0] - (-2 * x - k * y)) == 0
    assert sys.classify((0.0, 0.0), {k: 0.0}).kind == "saddle"
    bowl = gradient_flow(x**2 + 3 * y**2, (x, y))
    assert bowl.classify((0.0, 0.0)).kind == "min"
    assert gradient_flow(-(x**2) - y**2, (x, y)).classify((0, 0)).kind == "max"
    assert classify_matrix(np.zeros((2, 2))).kind == "degenerate"


def test_drift_zero_for_conserved_and_nonzero_otherwise():
    rot = ReducedSystem((x, y), (), sp.Matrix([-y, x]),
                        invariants={"r2": x**2 + y**2, "x": x})
    assert rot.drift("r2") == 0
    assert rot.drift("x") != 0
    with pytest.raises(ValueError, match="unknown invariant"):
        rot.drift("nope")


def test_simplify_zero_handles_piecewise():
    expr = sp.Piecewise((x - x, y > 0), (sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1, True))
    assert simplify_zero(expr) == 0


def test_stationary_points_of_double_well():
    sys = gradient_flow((x**2 - 1) ** 2 + y**2, (x, y))
    pts = sys.stationary_points(box=[(-2, 2), (-2, 2)], starts=30, seed=1)
    xs = sorted(np.round(pts[:, 0], 6))
    assert set(xs) == {-1.0, 0.0, 1.0}
    kinds = {round(p[0]): sys.classify(p).kind for p in pts}
    assert kinds == {-1: "min", 0: "saddle", 1: "min"}


@given(st.floats(-3, 3), st.floats(-3, 3), st.floats(0.1, 2))
def test_lambdify_numpy_torch_and_vectorised_agree(a, b, kk):
    sys = gradient_flow(x**4 / 4 + k * x * y + y**2, (x, y), (k,))
    f_np, f_t = sys.lambdify("numpy"), sys.lambdify("torch")
    point = np.array([a, b])
    single = f_np(0.0, point, kk)
    torch_out = f_t(0.0, torch.tensor(point, dtype=torch.float64), kk).numpy()
    np.testing.assert_allclose(single, torch_out, rtol=1e-12, atol=1e-12)
    batch = f_np(0.0, np.stack([point, 2 * point], axis=1), kk)
    np.testing.assert_allclose(batch[:, 0], single, rtol=1e-12, atol=1e-12)


def test_integrate_linear_flow_matches_closed_form_and_t0():
    sys = gradient_flow(k * x**2 / 2, (x,), (k,))
    t = np.linspace(0, 3, 7)
    sol = integrate(sys, (2.0,), 3.0, {k: 1.5}, t_eval=t)
    np.testing.assert_allclose(sol.y[0], 2.0 * np.exp(-1.5 * t), rtol=1e-8)
    assert sol.y[0, 0] == 2.0
    with pytest.raises(ValueError, match="values needed"):
        integrate(sys, (2.0,), 1.0)


def test_a_terminal_event_before_the_first_requested_time_gives_empty_arrays():
    """scipy hands back lists for t and y when a terminal event fires before t_eval's first
    point; integrate gives arrays of shape (0,) and (d, 0) and the event time."""
    sys = gradient_flow(-k * x**2 / 2, (x,), (k,))  # ascent: x grows like e^(k t)
    sol = integrate(sys, (1.0,), 10.0, {k: 1.0}, t_eval=[5.0, 10.0],
                    events=(lambda t, y: 2.0 - y[0],))
    assert sol.t.shape == (0,) and sol.y.shape == (1, 0)
    assert sol.t_event == pytest.approx(np.log(2.0), rel=1e-6)


def test_latex_and_shape_validation():
    sys = gradient_flow(x**2, (x,))
    assert r"\dot{x}" in sys.latex()
    with pytest.raises(ValueError, match="rhs must have shape"):
        ReducedSystem((x, y), (), sp.Matrix([x]))
