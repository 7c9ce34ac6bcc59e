"""Sweep figures: parameter units on the axes, heat-map cells centred on the swept values."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxrotor.io import plotting  # noqa: E402
from jaxrotor.io.sweep_plot import axis_label, cell_edges, heatmap, metric_label, parameter_unit  # noqa: E402
from jaxrotor.workflows.sweep import _figures, loads_sweep, sweep_points  # noqa: E402
from unit.test_sweep import FLIGHT  # noqa: E402


def _centres(mesh):
    """Cell centres ``(x (nx,), y (ny,))`` of a ``pcolormesh`` read back from its vertices."""
    xy = np.asarray(mesh.get_coordinates())  # (ny + 1, nx + 1, 2)
    xe, ye = xy[0, :, 0], xy[:, 0, 1]
    return 0.5 * (xe[1:] + xe[:-1]), 0.5 * (ye[1:] + ye[:-1])


def test_cells_centred_on_their_values():
    """An even grid: every cell centred on its value. An uneven one: boundaries midway between neighbours
    (each cell the region nearest its value), the outer cells centred on theirs."""
    x, y = np.array([0.0, 0.25, 0.5, 0.75]), np.array([-2.0, 3.0])
    z = np.arange(8.0).reshape(4, 2)
    fig, ax = plt.subplots()
    mesh = heatmap(ax, x, y, z)
    cx, cy = _centres(mesh)
    np.testing.assert_allclose(cx, x, atol=1e-15)
    np.testing.assert_allclose(cy, y, atol=1e-15)
    # cell (i, j) holds z[i, j]: the mesh stores rows along y
    np.testing.assert_array_equal(np.asarray(mesh.get_array()).reshape(2, 4), z.T)
    uneven = np.array([0.0, 0.1, 0.4, 1.0])
    edges = cell_edges(uneven[::-1])  # any order
    np.testing.assert_allclose(edges, [-0.05, 0.05, 0.25, 0.7, 1.3])
    assert np.all((edges[:-1] < uneven) & (uneven < edges[1:]))
    np.testing.assert_allclose(0.5 * (edges[[0, -2]] + edges[[1, -1]]), uneven[[0, -1]])
    np.testing.assert_allclose(cell_edges([2.0]), [1.9, 2.1])
    with pytest.raises(ValueError, match="increasing"):
        heatmap(ax, x[::-1], y, z)
    plt.close(fig)


def test_units_of_design_paths():
    conf = loads_sweep(FLIGHT + "[sweep]\n[sweep.parameters.\"platform.alpha\"]\nlower = 0.0\nupper = 0.5\n"
                       "points = 2\n", check_memory=False)
    d = conf.design
    assert axis_label(d, "platform.alpha") == "platform.alpha [rad]"
    assert axis_label(d, "platform.arm_length") == "platform.arm_length [m]"
    assert parameter_unit(d, "platform.mass") == "kg" and parameter_unit(d, "platform.c_f") == "N s^2/rad^2"
    assert axis_label(d, "controller.K_p[2]") == "controller.K_p[2] [1/s^2]"  # the controller's registered unit
    assert parameter_unit(d, "controller.K_w") == "N m s/rad"
    assert axis_label(d, "platform.no_such") == "platform.no_such"  # unknown: the path alone
    assert metric_label("rmse_position") == "rmse_position [m]" and metric_label("mae_orientation_xyz[1]") == (
        "mae_orientation_xyz[1] [rad]")


def test_heatmap_of_a_grid_sweep(tmp_path, monkeypatch):
    """The figure of a 2-axis grid sweep: one cell per point centred on its (alpha, beta), labels with units."""
    text = FLIGHT + """
[sweep]
kind = "grid"
metric = "rmse_position"
[sweep.parameters."platform.alpha"]
lower = 0.1
upper = 0.5
points = 3
[sweep.parameters."controller.K_p[2]"]
lower = 40.0
upper = 70.0
points = 4
"""
    conf = loads_sweep(text, check_memory=False)
    points = sweep_points(conf.spec)
    table = [{"diverged": False, "rmse_position": 1e-3 * (1 + i)} for i in range(len(points))]
    seen = {}
    save = plotting.save_figure

    def capture(fig, path, **kw):
        ax = fig.axes[0]
        seen.update(xlabel=ax.get_xlabel(), ylabel=ax.get_ylabel(), mesh=ax.collections[0],
                    cbar=fig.axes[1].get_ylabel())
        return save(fig, path, **kw)

    monkeypatch.setattr(plotting, "save_figure", capture)
    paths = _figures(conf, points, table, tmp_path)
    assert [p.name for p in paths] == ["sweep_rmse_position_heatmap.png"] and paths[0].is_file()
    assert seen["xlabel"] == "platform.alpha [rad]" and seen["ylabel"] == "controller.K_p[2] [1/s^2]"
    assert seen["cbar"] == "rmse_position [m]"
    cx, cy = _centres(seen["mesh"])
    np.testing.assert_allclose(cx, [0.1, 0.3, 0.5], rtol=1e-14)
    np.testing.assert_allclose(cy, [40.0, 50.0, 60.0, 70.0], rtol=1e-14)
    # the value drawn in the cell at (alpha_i, K_p,z j) is that point's metric
    z = np.asarray(seen["mesh"].get_array()).reshape(4, 3)
    for k, (a, kp) in enumerate(points):
        i, j = int(np.argmin(abs(cx - a))), int(np.argmin(abs(cy - kp)))
        assert z[j, i] == pytest.approx(table[k]["rmse_position"])
