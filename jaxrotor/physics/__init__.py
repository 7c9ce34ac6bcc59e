"""The physics layer: the same vehicle as a MuJoCo multibody model.

* :mod:`~jaxrotor.physics.parts`: what the vehicle is made of (masses and shapes);
  :func:`paper_hexarotor_parts` is the Table II hexarotor (``J^p``), :func:`default_parts`
  a generic build for any other platform.
* :mod:`~jaxrotor.physics.mjcf`: the model generator (``Platform`` + ``Parts`` -> MJCF
  -> ``mujoco.MjModel``), with the engine's mass and inertia.
* :mod:`~jaxrotor.physics.plants`: the plants :class:`MJXPlant` (jit, vmap, grad) and
  :class:`MuJoCoPlant` (the C engine) that :func:`jaxrotor.fly` flies like the analytic one.
* :mod:`~jaxrotor.physics.engine`: :func:`fly_physics`, a MuJoCo C flight with its timings.
* :mod:`~jaxrotor.physics.mjx`: :func:`make_mjx_flight`, an MJX flight as a function of the
  controller and the MJX model.

Both layers side by side (Table IV, Fig. 8) is a workflow: :mod:`jaxrotor.workflows.validate`.

See ``docs/physics.md``.
"""

from .engine import PhysicsResult as PhysicsResult
from .engine import PhysicsSettings as PhysicsSettings
from .engine import contact_force as contact_force
from .engine import fly_physics as fly_physics
from .plants import MJXPlant as MJXPlant
from .plants import MuJoCoPlant as MuJoCoPlant
from .mjcf import ModelOptions as ModelOptions
from .mjcf import PhysicsModel as PhysicsModel
from .mjcf import build_model as build_model
from .mjcf import mjcf as mjcf
from .parts import Arm as Arm
from .parts import Hub as Hub
from .parts import LandingGear as LandingGear
from .parts import Motor as Motor
from .parts import Parts as Parts
from .parts import Propeller as Propeller
from .parts import default_parts as default_parts
from .parts import paper_hexarotor_parts as paper_hexarotor_parts

__all__ = ["Arm", "Hub", "LandingGear", "MJXPlant", "ModelOptions", "Motor", "MuJoCoPlant", "Parts", "PhysicsModel", "PhysicsResult",
           "PhysicsSettings", "Propeller", "build_model", "contact_force", "default_parts", "fly_physics", "mjcf",
           "paper_hexarotor_parts"]
