"""The physics layer: the same vehicle as a MuJoCo multibody model.

* :mod:`~jaxrotor.physics.parts`: what the vehicle is made of: the design's
  :class:`~jaxrotor.design.parts.Parts` (re-exported here), :func:`default_parts` (the parts a
  platform is built from: its own, the paper's :func:`paper_hexarotor_parts` (``J^p``) for its
  presets, else :func:`fit_parts`: generic parts plus a ballast that reproduce a typed-in mass
  and inertia).
* :mod:`~jaxrotor.physics.mjcf`: the model generator (``Platform`` + ``Parts`` -> MJCF
  -> ``mujoco.MjModel``), with the engine's mass and inertia beside the platform's
  (:class:`InertiaMismatchWarning` when they differ).
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
from .mjcf import InertiaMismatchWarning as InertiaMismatchWarning
from .mjcf import ModelOptions as ModelOptions
from .mjcf import PhysicsModel as PhysicsModel
from .mjcf import build_model as build_model
from .mjcf import mjcf as mjcf
from .parts import Arm as Arm
from .parts import Ballast as Ballast
from .parts import Battery as Battery
from .parts import Hub as Hub
from .parts import LandingGear as LandingGear
from .parts import Motor as Motor
from .parts import Parts as Parts
from .parts import Payload as Payload
from .parts import Propeller as Propeller
from .parts import default_parts as default_parts
from .parts import fit_parts as fit_parts
from .parts import paper_hexarotor_parts as paper_hexarotor_parts

__all__ = ["Arm", "Ballast", "Battery", "Hub", "InertiaMismatchWarning", "LandingGear", "MJXPlant", "ModelOptions",
           "Motor", "MuJoCoPlant", "Parts", "Payload", "PhysicsModel", "PhysicsResult", "PhysicsSettings", "Propeller",
           "build_model", "contact_force", "default_parts", "fit_parts", "fly_physics", "mjcf",
           "paper_hexarotor_parts"]
