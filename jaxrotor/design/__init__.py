"""Vehicle design: the :class:`Platform` (geometry, rotors, rigid body; eqs. 3-4, Table I labels),
layout builders and named presets.

Dependencies run one way: ``validation`` <- ``platform`` <- ``layouts`` <- ``presets``.
"""

from . import layouts, platform, presets
from .platform import Platform, class_label, explicit_platform, lumped_inertia, star_platform

__all__ = ["layouts", "platform", "presets", "Platform", "class_label", "explicit_platform", "lumped_inertia",
           "star_platform"]
