"""jaxrotor: differentiable simulation, analysis and design of tilted and tilting multirotors.

The public API is re-exported here; see ``docs/`` for the theory and workflows.
"""

from . import (
    allocation as allocation,
    allocators as allocators,
    analysis as analysis,
    control as control,
    design as design,
    flight as flight,
    metrics as metrics,
    numerics as numerics,
    optimize as optimize,
    reference as reference,
    so3 as so3,
)
from .design import layouts as layouts, presets as presets
from .allocation import (
    allocation_matrix as allocation_matrix,
    force_matrix as force_matrix,
    hover_inputs as hover_inputs,
    moment_matrix as moment_matrix,
    wrench as wrench,
)
from .dynamics import (
    Actuators as Actuators,
    FirstOrderMotor as FirstOrderMotor,
    FirstOrderServo as FirstOrderServo,
    IdealMotor as IdealMotor,
    IdealServo as IdealServo,
    RotorCommand as RotorCommand,
    VehicleState as VehicleState,
    WrenchCommand as WrenchCommand,
    initial_state as initial_state,
    vehicle_derivative as vehicle_derivative,
)
from .integrate import Integrator as Integrator
from .design.platform import (
    Platform as Platform,
    class_label as class_label,
    explicit_platform as explicit_platform,
    lumped_inertia as lumped_inertia,
    rotor_axes as rotor_axes,
    rotor_positions as rotor_positions,
    star_platform as star_platform,
)
from .allocators import BoxLS as BoxLS, Clip as Clip, PseudoInverse as PseudoInverse, TorquePriority as TorquePriority
from .control import FullyActuatedSE3 as FullyActuatedSE3, UnderactuatedSE3 as UnderactuatedSE3
from .tilting import CantSelection as CantSelection, ExtendedVariable as ExtendedVariable
from .sensors import Sensors as Sensors
from .wind import Wind as Wind
from .randomize import Randomization as Randomization
from .flight import DivergenceLimits as DivergenceLimits, Flight as Flight, fly as fly
from .metrics import FlightMetrics as FlightMetrics, flight_metrics as flight_metrics
from .simulate import simulate as simulate, simulate_open_loop as simulate_open_loop
from .trajectory import Trajectory as Trajectory

__version__ = "0.1.0"
