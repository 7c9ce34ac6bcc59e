"""Differentiable design: parameters and bounds, objectives, NaN-safe problems and optax loops."""

from . import objectives
from .core import *  # noqa: F401,F403
from .core import __all__ as _core_all

__all__ = ["objectives", *_core_all]
