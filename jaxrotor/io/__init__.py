"""Input and output: every TOML configuration, reports and figures.

* :mod:`~jaxrotor.io.toml` - the one TOML layer: :func:`~jaxrotor.io.toml.read_toml`,
  the typed :class:`~jaxrotor.io.toml.Table` and :class:`~jaxrotor.io.toml.ConfigError`;
  :meth:`~jaxrotor.io.toml.Table.build` builds the ``kind`` a table names from the options
  that kind declares next to its class (:mod:`jaxrotor.registry`).
* :mod:`~jaxrotor.io.platform_table` - the ``[platform]`` table.
* :mod:`~jaxrotor.io.config` - a flight configuration: :class:`~jaxrotor.io.config.FlightConfig`
  with its :class:`~jaxrotor.flight.Flight`.
* :mod:`~jaxrotor.io.optimize_config` - ``jaxrotor tune`` / ``optimize`` problems.
* :mod:`~jaxrotor.io.plotting`, :mod:`~jaxrotor.io.design_plot` - figures.
"""
