"""Numerical layer of tdcheck: full models in torch, the ensemble trainer, ODE integration."""
