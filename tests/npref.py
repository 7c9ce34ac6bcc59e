"""Independent NumPy reference pieces shared by the tests (no jaxrotor code)."""

import math

import numpy as np


def np_rx(a):
    """Elementary rotation about x by ``a`` [rad]."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def np_ry(a):
    """Elementary rotation about y by ``a`` [rad]."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def np_rz(a):
    """Elementary rotation about z by ``a`` [rad]."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
