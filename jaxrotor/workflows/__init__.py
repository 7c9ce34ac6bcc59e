"""Workflows that write files: the layer above ``io`` and below ``cli``.

One module each (import the one you need; importing this package imports none of them):

* :mod:`~jaxrotor.workflows.usecase` - the paper's use case end to end: :func:`~jaxrotor.workflows.usecase.run`
  flies a :class:`~jaxrotor.io.config.FlightConfig`, prints the metrics beside Table IV and writes
  figures, ``trajectory.npz`` and ``metrics.json`` (``jaxrotor simulate``).
* :mod:`~jaxrotor.workflows.validate` - both layers side by side: ``validation.json``, Table IV, Fig. 8
  (``jaxrotor validate``); the comparison pieces it shares with the use case are in
  :mod:`~jaxrotor.workflows.compare`, and :mod:`~jaxrotor.workflows.paper` says whether a flight is the
  paper's use case (the only one its outputs cite the paper for) and how any other is titled.
* :mod:`~jaxrotor.workflows.report` - an optimisation run's ``result.json``, ``loss.png`` and ``params.png``
  (``jaxrotor tune`` / ``optimize``); :mod:`~jaxrotor.workflows.robust` - the physics-layer check of a
  robust tuning.
* :mod:`~jaxrotor.workflows.sweep` - parameter sweeps: ``[sweep]`` tables, chunks, ``sweep.csv`` and figures
  (``jaxrotor sweep``).

The layers import one way (``core <- physics <- optimize <- io <- workflows <- cli``,
``tests/unit/test_layers.py``): nothing below this package imports it.
"""
