"""``jaxrotor validate --animate``: the GIFs animate the flights validate wrote, the physics layer's included.

The same flight as ``test_cli_validate`` (the paper's use case, first second), so the compiled
flight comes from the shared compilation cache.
"""

import math

import numpy as np
from click.testing import CliRunner
from PIL import Image

from jaxrotor.cli import main
from jaxrotor.design.platform import rotor_positions
from jaxrotor.io import animation, config

CONFIG = "configs/paper_reproduction.toml"
FPS = 5.0


def test_validate_animate_draws_the_physics_flight(tmp_path, monkeypatch):
    animators = {}
    real = animation.animate_flight

    def record(path, anim):  # keep each animator to inspect its drawn geometry, then write the file as usual
        animators[path.name] = anim
        return real(path, anim)

    monkeypatch.setattr(animation, "animate_flight", record)
    res = CliRunner().invoke(main, ["validate", CONFIG, "--t1", "1", "--out", str(tmp_path), "--no-figures",
                                    "--animate", "--fps", str(FPS)])
    assert res.exit_code == 0, res.output
    assert f"wrote {tmp_path / 'flight_physics.gif'}" in res.output

    phys = np.load(tmp_path / "trajectory_physics.npz")
    ana = np.load(tmp_path / "trajectory.npz")
    t = phys["t"]
    np.testing.assert_array_equal(ana["t"], t)
    # FlightAnimator.num_frames: floor((t_end - t0) fps) + 1 = floor(1 s * 5 / s) + 1
    n_frames = math.floor((t[-1] - t[0]) * FPS + 1e-9) + 1
    assert n_frames == 6
    for gif in ("flight_physics.gif", "flight.gif"):
        with Image.open(tmp_path / gif) as im:
            assert im.n_frames == n_frames and im.info["duration"] == round(1000 / FPS)
    assert set(animators) == {"flight_physics.gif", "flight.gif"}

    conf = config.load(CONFIG).with_t1(1.0)
    anim = animators["flight_physics.gif"]
    assert "physics layer" in anim.title and "analytic layer" in animators["flight.gif"].title
    # the reference path is the configured reference sampled at the physics layer's times
    p_ref = np.stack([np.asarray(conf.flight.reference(float(s)).p) for s in t])
    np.testing.assert_allclose(anim.p_ref, p_ref, atol=1e-12)
    # frame k shows the physics state at t = k / fps: hubs p + s R p_i (eq. (3)) projected on the view
    pos = np.asarray(rotor_positions(conf.platform))
    B = animation.view_basis(anim.azim, anim.elev)
    for k in range(n_frames):
        i = int(anim.frame_index[k])
        assert abs(t[i] - k / FPS) < 1e-9
        anim.update(k)
        hubs_w = phys["p"][i] + anim.scale * pos @ phys["R"][i].T
        np.testing.assert_allclose(np.column_stack(anim._hubs.get_data()), hubs_w @ B.T, atol=1e-12)
        np.testing.assert_allclose(np.column_stack(anim._trace.get_data())[-1], phys["p"][i] @ B.T, atol=1e-12)
    # the physics GIF draws the physics flight, not the analytic one (they differ by micrometres after the climb)
    np.testing.assert_array_equal(anim.p, phys["p"])
    np.testing.assert_array_equal(animators["flight.gif"].p, ana["p"])
    assert np.max(np.abs(phys["p"] - ana["p"])) > 0

    # the last GIF frame shows the red hub markers where the last frame's hubs project
    with Image.open(tmp_path / "flight_physics.gif") as im:
        im.seek(n_frames - 1)
        img = np.asarray(im.convert("RGB")).astype(int)
    anim.update(n_frames - 1)
    px = anim._ax.transData.transform(np.column_stack(anim._hubs.get_data()))
    for x, y in px:
        r, c = round(img.shape[0] - y), round(x)
        patch = img[r - 1:r + 2, c - 1:c + 2]
        assert ((patch[..., 0] > 150) & (patch[..., 1] < 110) & (patch[..., 2] < 110)).any(), (x, y)


def test_validate_animate_bad_fps():
    res = CliRunner().invoke(main, ["validate", CONFIG, "--animate", "--fps", "0"])
    assert res.exit_code == 2 and "--fps" in res.output
