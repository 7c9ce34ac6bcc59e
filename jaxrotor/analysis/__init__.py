"""Actuation analysis of a design: ranks, decoupling, hoverability, rotor-loss robustness,
capability linear programs, and differentiable measures for optimisation."""

from .core import *  # noqa: F401,F403
from .core import __all__ as __all__
