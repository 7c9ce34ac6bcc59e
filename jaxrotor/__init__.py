"""jaxrotor: differentiable simulation, analysis and design of tilted and tilting multirotors.

The public API is re-exported here; see ``docs/`` for the theory and workflows.
Every name is imported on first use (``jaxrotor.Flight``, ``from jaxrotor import fly``),
so ``import jaxrotor.io.config`` or ``jaxrotor --help`` does not pay for JAX, the
optimiser or the physics engine it does not use. Add a public name to :data:`_EXPORTS`.
"""

import importlib

__version__ = "0.1.0"

#: Subpackages and modules reachable as ``jaxrotor.<name>`` without importing them first.
_SUBMODULES = ("aero", "allocation", "allocators", "analysis", "control", "design", "flight", "metrics", "numerics",
               "optimize", "reference", "so3")

#: Public names re-exported here, by the module (relative to ``jaxrotor``) that defines them.
_EXPORTS = {
    "design": ("layouts", "presets"),
    "allocation": ("allocation_matrix", "force_matrix", "hover_inputs", "moment_matrix", "wrench"),
    "dynamics": ("Actuators", "FirstOrderMotor", "FirstOrderServo", "IdealMotor", "IdealServo", "RotorCommand",
                 "VehicleState", "WrenchCommand", "initial_state", "vehicle_derivative"),
    "integrate": ("AbstractCheckpoint", "AutoCheckpoint", "Integrator", "IntervalCheckpoint", "NoCheckpoint",
                  "StageCheckpoint", "StepCheckpoint"),
    "design.platform": ("Platform", "class_label", "explicit_platform", "lumped_inertia", "rotor_axes",
                        "rotor_positions", "star_platform"),
    "allocators": ("BoxLS", "Clip", "PseudoInverse", "TorquePriority"),
    "control": ("FullyActuatedSE3", "UnderactuatedSE3"),
    "tilting": ("CantSelection", "ExtendedVariable"),
    "sensors": ("Sensors",),
    "wind": ("Wind",),
    "aero": ("Aerodynamics",),
    "randomize": ("Randomization",),
    "flight": ("DivergenceLimits", "Flight"),
    "loop": ("fly",),
    "plant": ("AbstractPlant", "AnalyticPlant"),
    "metrics": ("FlightMetrics", "flight_metrics"),
    "simulation": ("simulate", "simulate_open_loop"),
    "trajectory": ("Trajectory",),
}

_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted((*_SUBMODULES, *_WHERE))


def __getattr__(name: str):
    """Import ``jaxrotor.<name>`` (a subpackage) or the module defining a re-exported name, on first use."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
