"""Flight animation: drawn geometry against eq. (3)/(4) projected by hand, the GIF file, bad requests."""


import numpy as np
import pytest
from PIL import Image

from jaxrotor import so3
from jaxrotor.design.platform import rotor_axes, rotor_positions, star_platform
from jaxrotor.io import animation


@pytest.fixture(scope="module")
def tilted():
    """A tilted, elevated hexarotor (nonzero alpha, beta, delta) so the axes and hubs are not trivial."""
    return star_platform(6, 0.4, mass=2.0, c_f=1e-5, c_tau=1e-7, hub_mass=0.1, alpha=0.3, beta=0.2, delta=0.1)


def _flight(T=41, dt=0.01):
    t = np.arange(T) * dt
    p = np.stack([np.cos(t), 2 * np.sin(t), 0.5 * t], axis=1)
    R = np.stack([np.asarray(so3.rot_z(0.7 * s) @ so3.rot_x(0.4 * s) @ so3.rot_y(-0.2)) for s in t])
    return t, p, R, p + np.array([0.05, 0.0, -0.02])


def test_view_basis_closed_form():
    # az = 0, el = 0 looks along -x: screen (right, up) = (y, z); az = -90, el = 90 is the top view (x, y).
    np.testing.assert_allclose(animation.view_basis(0.0, 0.0), [[0, 1, 0], [0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(animation.view_basis(-90.0, 90.0), [[1, 0, 0], [0, 1, 0]], atol=1e-15)
    B = animation.view_basis(-37.0, 21.0)
    np.testing.assert_allclose(B @ B.T, np.eye(2), atol=1e-15)


@pytest.mark.parametrize("azim,elev,cols", [(0.0, 0.0, [1, 2]), (-90.0, 90.0, [0, 1])])
def test_drawn_rotors_match_geometry(tilted, azim, elev, cols):
    t, p, R, p_ref = _flight()
    pos, ax_b = np.asarray(rotor_positions(tilted)), np.asarray(rotor_axes(tilted))
    anim = animation.FlightAnimator(pos, ax_b, t, p, R, p_ref, fps=50.0, scale=3.0, azim=azim, elev=elev)
    assert anim.num_frames == 21  # floor(0.4 s * 50) + 1
    k = 13
    i = int(anim.frame_index[k])
    assert t[i] == pytest.approx(k / 50.0)
    anim.update(k)
    hubs_w = p[i] + 3.0 * pos @ R[i].T  # eq. (3) in the world frame, scaled by 3
    np.testing.assert_allclose(np.column_stack(anim._hubs.get_data()), hubs_w[:, cols], atol=1e-12)
    # each drawn spin arrow is parallel to the projected world spin axis R z_i (eq. (4)) and points along it
    sp = np.column_stack(anim._spin.get_data()).reshape(-1, 3, 2)
    d = sp[:, 1] - sp[:, 0]
    z_w = (ax_b @ R[i].T)[:, cols]
    cross = d[:, 0] * z_w[:, 1] - d[:, 1] * z_w[:, 0]
    np.testing.assert_allclose(cross, 0.0, atol=1e-12)
    assert np.all(np.sum(d * z_w, axis=1) > 0)
    # rotor discs: every point is at the rotor radius from its hub, in the plane normal to the spin axis
    g = anim.frame_geometry(k)
    rel = g["discs"] - g["hubs"][:, None, :]
    np.testing.assert_allclose(np.linalg.norm(rel, axis=-1), 3.0 * anim.rotor_radius, rtol=1e-12)
    np.testing.assert_allclose(np.einsum("nmk,nk->nm", rel, ax_b @ R[i].T), 0.0, atol=1e-12)
    # the trace ends at the current position; the stamp shows the frame time
    np.testing.assert_allclose(np.column_stack(anim._trace.get_data())[-1], p[i, cols], atol=1e-12)
    assert anim._stamp.get_text() == "t =   0.26 s"


def test_rendered_pixels_show_the_hubs(tilted):
    t, p, R, p_ref = _flight()
    anim = animation.FlightAnimator(np.asarray(rotor_positions(tilted)), np.asarray(rotor_axes(tilted)), t, p, R,
                                    p_ref, fps=25.0, scale=2.0)
    img = anim.render(5)
    assert img.shape == (400, 480, 3) and img.dtype == np.uint8
    hubs = np.column_stack(anim._hubs.get_data())
    px = anim._ax.transData.transform(hubs)  # display pixels, origin bottom-left
    for x, y in px:
        r, c = round(img.shape[0] - y), round(x)
        patch = img[r - 1:r + 2, c - 1:c + 2].astype(int)
        red = (patch[..., 0] > 150) & (patch[..., 1] < 110) & (patch[..., 2] < 110)  # tab:red hub marker
        assert red.any(), (x, y)


def test_gif_frames_and_size(tmp_path, tilted):
    t, p, R, p_ref = _flight()
    anim = animation.FlightAnimator(np.asarray(rotor_positions(tilted)), np.asarray(rotor_axes(tilted)), t, p, R,
                                    p_ref, fps=10.0, size=(320, 240))
    out = animation.animate_flight(tmp_path / "f.gif", anim)
    with Image.open(out) as im:
        assert im.n_frames == 5 and im.size == (320, 240)  # floor(0.4 s * 10) + 1 frames
        assert im.info["duration"] == 100
        frames = []
        for k in range(im.n_frames):
            im.seek(k)
            frames.append(np.asarray(im.convert("RGB")))
    assert not np.array_equal(frames[0], frames[-1])  # the vehicle moved


def test_bad_animation_requests(tmp_path, tilted, monkeypatch):
    t, p, R, p_ref = _flight()
    pos, ax_b = np.asarray(rotor_positions(tilted)), np.asarray(rotor_axes(tilted))
    with pytest.raises(ValueError, match="fps.*Fix"):
        animation.FlightAnimator(pos, ax_b, t, p, R, p_ref, fps=0.0)
    with pytest.raises(ValueError, match="axes.*Fix"):
        animation.FlightAnimator(pos, ax_b[:3], t, p, R, p_ref)
    anim = animation.FlightAnimator(pos, ax_b, t, p, R, p_ref, fps=10.0)
    with pytest.raises(ValueError, match="suffix.*Fix"):
        animation.animate_flight(tmp_path / "f.avi", anim)
    monkeypatch.setattr(animation.shutil, "which", lambda name: None)
    with pytest.raises(ValueError, match="ffmpeg.*Fix"):
        animation.animate_flight(tmp_path / "f.mp4", anim)
    # a diverged flight is animated up to its last finite sample
    p_bad = p.copy()
    p_bad[30:] = np.nan
    anim = animation.FlightAnimator(pos, ax_b, t, p_bad, R, p_ref, fps=10.0)
    assert anim.num_frames == 3 and np.all(np.isfinite(p_bad[anim.frame_index]))
