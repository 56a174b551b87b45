"""Symbolic layer of tdcheck: reduced theories derived with sympy (no torch here).

Each paper has one module (``theory.markov`` ...) exposing named closed forms, system
factories and ``equations()``; the shared toolkit lives in :mod:`theory.flow`.
"""

from theory.flow import Classification, ReducedSystem, gradient_flow

__all__ = ["Classification", "ReducedSystem", "gradient_flow"]
