"""``jaxrotor simulate --animate``: the GIF of a flown config, the trajectory file's reference and tilt."""

from pathlib import Path

import numpy as np
from click.testing import CliRunner
from PIL import Image

from jaxrotor import so3
from jaxrotor.cli import main
from jaxrotor.design.platform import rotor_axes, star_platform
from jaxrotor.io import animation

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _flight(T=41, dt=0.01):
    t = np.arange(T) * dt
    p = np.stack([np.cos(t), 2 * np.sin(t), 0.5 * t], axis=1)
    R = np.stack([np.asarray(so3.rot_z(0.7 * s) @ so3.rot_x(0.4 * s) @ so3.rot_y(-0.2)) for s in t])
    return t, p, R, p + np.array([0.05, 0.0, -0.02])


def test_cli_simulate_animate(tmp_path, monkeypatch):
    """The --animate flag animates the trajectory.npz the flight wrote (the flight itself is covered in
    test_config_cli; here a known trajectory stands in for it so no solver is compiled)."""
    from jaxrotor.workflows import usecase

    t, p, R, p_ref = _flight()

    def fake_run(conf, out_dir, **kw):
        np.savez(Path(out_dir) / "trajectory.npz", t=t, p=p, R=R, p_ref=p_ref)
        return {"diverged": False, "label": "cs_4r"}

    monkeypatch.setattr(usecase, "run", fake_run)
    res = CliRunner().invoke(main, ["simulate", str(CONFIGS / "cs_4r.toml"), "--out", str(tmp_path),
                                    "--no-progress", "--animate", "--fps", "20"])
    assert res.exit_code == 0, res.output
    with Image.open(tmp_path / "flight.gif") as im:
        assert im.n_frames == 9 and im.info["duration"] == 50  # t = 0, 0.05, ..., 0.4 s
    res = CliRunner().invoke(main, ["simulate", str(CONFIGS / "cs_4r.toml"), "--animate", "--fps", "0"])
    assert res.exit_code == 2 and "--fps" in res.output


def test_trajectory_file_reference_and_tilt(tmp_path, monkeypatch):
    """A file without ``p_ref`` (the physics layer's) takes the reference path from ``reference``; a tilting
    platform's saved servo angles turn the drawn spin axes (eq. (4) per sample)."""
    from jaxrotor import reference as R

    plat = star_platform(6, 0.4, mass=2.0, c_f=1e-5, c_tau=1e-7, hub_mass=0.1, alpha=0.0, tilting=("alpha",))
    t, p, R_wb, _ = _flight()
    alpha = np.linspace(0.0, 0.5, t.size)
    np.savez(tmp_path / "traj.npz", t=t, p=p, R=R_wb, alpha=alpha, beta=np.zeros_like(alpha))
    ref = R.Transfer([0.0, 0.0, 1.0], [1.0, 0.0, 1.0], 0.2)
    seen = {}
    monkeypatch.setattr(animation, "animate_flight", lambda path, anim: seen.setdefault("anim", anim) and path)
    animation.animate_trajectory_file(tmp_path / "traj.npz", plat, tmp_path / "f.gif", fps=10.0, reference=ref)
    anim = seen["anim"]
    # minimum-jerk transfer: halfway at t = 0.1 s, at the end from t = 0.2 s on
    np.testing.assert_allclose(anim.p_ref[10], [0.5, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(anim.p_ref[-1], [1.0, 0.0, 1.0], atol=1e-12)
    k = anim.num_frames - 1
    i = int(anim.frame_index[k])
    np.testing.assert_allclose(anim.axes_b[i], np.asarray(rotor_axes(plat, alpha[i], 0.0)), atol=1e-12)
    assert not np.allclose(anim.axes_b[0], anim.axes_b[i])
