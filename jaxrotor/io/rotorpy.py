"""A RotorPy vehicle in jaxrotor's terms: :func:`from_rotorpy` maps a RotorPy 3.0 parameter dictionary (vehicle,
motor and aerodynamic coefficients) unchanged (``docs/aero.md``, the convention map). RotorPy itself is not
imported."""

from __future__ import annotations

import equinox as eqx
import numpy as np

from ..aero import Aerodynamics
from ..design.platform import explicit_platform
from ..dynamics import FirstOrderMotor

__all__ = ["RotorPyVehicle", "from_rotorpy"]


class RotorPyVehicle(eqx.Module):
    """A RotorPy vehicle in jaxrotor's terms (:func:`from_rotorpy`).

    Attributes:
        platform: the :class:`~jaxrotor.design.platform.Platform` (hubs ``rotor_pos``, axes ``z_B``, ``c_f = k_eta``,
            ``c_tau = k_m``, ``kappa = rotor_directions``, mass, full inertia, ``g = 9.81``, speed limits).
        aero: the :class:`~jaxrotor.aero.Aerodynamics` (``c_Dx, c_Dy, c_Dz, k_d, k_z, k_h, k_flap``, ``rotor_radius``).
        motor: the :class:`~jaxrotor.dynamics.FirstOrderMotor` of ``tau_m`` (RotorPy's first-order speed lag).
    """

    platform: object
    aero: Aerodynamics
    motor: object


def from_rotorpy(params: dict, name: str = "rotorpy") -> RotorPyVehicle:
    """The vehicle of a RotorPy parameter dictionary (``rotorpy.vehicles.hummingbird_params.quad_params`` and the
    like), unchanged: RotorPy's body frame is FLU at the centre of mass with rotors along ``z_B``, its yaw moment
    ``rotor_dir_i k_m omega_i^2`` is eq. (6) with ``kappa_i = rotor_dir_i``, its gravity 9.81 m/s^2 and its motor
    ``omega_dot = (omega_cmd - omega) / tau_m`` with ``omega_cmd`` clipped to the speed limits
    (``docs/aero.md``). RotorPy itself is not needed.

    Raises:
        ValueError: a missing key (named).
    """
    need = ("mass", "Ixx", "Iyy", "Izz", "rotor_pos", "rotor_directions", "k_eta", "k_m", "tau_m",
            "rotor_speed_min", "rotor_speed_max")
    missing = [k for k in need if k not in params]
    if missing:
        raise ValueError(f"from_rotorpy parameter `params` lacks {missing}. Fix: pass a RotorPy quad_params "
                         "dictionary (e.g. rotorpy.vehicles.hummingbird_params.quad_params).")
    g = lambda k: float(params.get(k, 0.0))
    inertia = [[g("Ixx"), g("Ixy"), g("Ixz")], [g("Ixy"), g("Iyy"), g("Iyz")], [g("Ixz"), g("Iyz"), g("Izz")]]
    pos = np.array([np.asarray(v, dtype=float) for v in params["rotor_pos"].values()])
    platform = explicit_platform(pos, mass=g("mass"), c_f=g("k_eta"), c_tau=g("k_m"),
                                 kappa=[float(k) for k in params["rotor_directions"]], inertia=inertia, gravity=9.81,
                                 rotor_speed_min=g("rotor_speed_min"), rotor_speed_max=g("rotor_speed_max"), name=name)
    radius = params.get("rotor_radius")
    aero = Aerodynamics(parasitic_drag=(g("c_Dx"), g("c_Dy"), g("c_Dz")), rotor_drag=g("k_d"),
                        induced_inflow=g("k_z"), translational_lift=g("k_h"), flapping=g("k_flap"),
                        rotor_radius=None if radius is None else float(radius))
    return RotorPyVehicle(platform=platform, aero=aero, motor=FirstOrderMotor(time_constant=g("tau_m")))

