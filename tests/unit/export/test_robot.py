"""URDF and MJCF export: MuJoCo reloads both with the platform's mass, centre of mass, inertia and rotor poses
(1e-9), measured on MuJoCo's own model (joint-space inertia of a free root, body poses), not by the exporter."""

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest

from jaxrotor import so3
from jaxrotor.design import presets
from jaxrotor.design.platform import per_rotor_angles, rotor_axes, rotor_positions, star_platform
from jaxrotor.design.vehicles import paper_hexarotor_parts
from jaxrotor.export import robot
from jaxrotor.io.platform_table import load_platform
from jaxrotor.physics.mjcf import build_model
from jaxrotor.physics.parts import default_parts

ROOT = Path(__file__).resolve().parents[3]
PARTS_CONFIGS = sorted((ROOT / "configs" / "vehicles").glob("*_parts.toml"))
TOL = 1e-9


def two_hinge():
    """A hexarotor whose dihedral and cant both tilt (two hinges per mount: the URDF's intermediate links)."""
    return star_platform(6, 0.385, parts=paper_hexarotor_parts(), alpha=0.3, alpha_sign=[(-1.0) ** i for i in range(6)],
                         beta=0.2, tilting=("alpha", "beta"), name="two_hinge_hex")


VEHICLES = {
    "paper_hexarotor": lambda: presets.get("paper_hexarotor"),  # Table II parts carrying J^a
    "cs_4r": lambda: presets.get("cs_4r"),  # fitted flat parts: a planar inertia
    "y6": lambda: presets.get("y6"),  # coaxial, from parts
    "x8": lambda: presets.get("x8"),  # coaxial octo, from parts, CoM off the geometric centre
    "cs_a0_ting_6r": lambda: presets.get("cs_a0_ting_6r"),  # cant-tilting
    "two_hinge_hex": two_hinge,
    **{p.stem: (lambda p=p: load_platform(p)) for p in PARTS_CONFIGS},
}
_cache = {}


def vehicle(name):
    if name not in _cache:
        p = VEHICLES[name]()
        _cache[name] = (p, robot.mjcf_text(p), robot.urdf_text(p))
    return _cache[name]


def free_model(text, root):
    """The model with its root on a free joint (a URDF's root is welded to the world: give it one)."""
    spec = mujoco.MjSpec.from_string(text)
    if spec.body(root).first_joint() is None:
        spec.body(root).add_freejoint()
    return spec.compile()


def engine_properties(model, root):
    """MuJoCo's own: mass and inertia about the root's origin from the free joint's block of the joint-space
    inertia, centre of mass from subtree_com, rotor hubs and axes from the prop bodies' poses (root at identity)."""
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    b = model.body(root).id
    mass = M[0, 0]
    c = np.array(data.subtree_com[b])
    J = M[3:6, 3:6] - mass * (c @ c * np.eye(3) - np.outer(c, c))
    n = sum(1 for i in range(model.nbody) if model.body(i).name.startswith("prop"))
    pos = np.stack([data.body(f"prop{i}").xpos for i in range(n)])
    axes = np.stack([data.body(f"prop{i}").xmat.reshape(3, 3)[:, 2] for i in range(n)])
    assert np.allclose(M[:3, :3], mass * np.eye(3), atol=1e-12)
    return mass, c, J, pos, axes


def assert_platform(platform, mass, c, J, pos, axes):
    m0, J0 = float(platform.mass), np.asarray(platform.inertia, dtype=float)
    scale = float(np.abs(J0).max())
    assert abs(mass - m0) <= TOL * m0
    assert np.abs(c).max() <= TOL  # jaxrotor's body frame is at the centre of mass
    assert np.abs(J - J0).max() <= TOL * scale
    assert np.abs(pos - np.asarray(rotor_positions(platform))).max() <= TOL
    assert np.abs(axes - np.asarray(rotor_axes(platform))).max() <= TOL


@pytest.mark.parametrize("name", VEHICLES)
@pytest.mark.parametrize("kind", ["mjcf", "urdf"])
def test_reload_equals_platform(name, kind):
    platform, mj, urdf = vehicle(name)
    text, root = (mj, "frame") if kind == "mjcf" else (urdf, "base_link")
    assert_platform(platform, *engine_properties(free_model(text, root), root))
    model = mujoco.MjModel.from_xml_string(text)  # as written (a URDF's root welded): the helpers agree
    m, c, J = robot.mass_properties_of_model(model)
    pos, axes = robot.rotor_poses_of_model(model)
    assert_platform(platform, m, c, J, pos, axes)


@pytest.mark.parametrize("path", PARTS_CONFIGS, ids=lambda p: p.stem)
def test_parts_vehicles_match_mass_properties(path):
    platform, mj, urdf = vehicle(path.stem)
    mp = platform.mass_properties()
    for text, root in ((mj, "frame"), (urdf, "base_link")):
        mass, c, J, _, _ = engine_properties(free_model(text, root), root)
        assert abs(mass - float(mp.mass)) <= TOL * float(mp.mass)
        assert np.abs(J - np.asarray(mp.inertia)).max() <= TOL * float(np.abs(np.asarray(mp.inertia)).max())
        # the parts' centre of mass, where the platform puts its body origin (a given com_offset wins)
        if "com_offset" not in platform.overrides:
            assert np.abs(c - (np.asarray(mp.com) - np.asarray(platform.com_offset))).max() <= TOL


def test_urdf_links_joints_and_mujoco_parsing():
    platform, _, urdf = vehicle("x_quad_parts")
    tree = ET.fromstring(urdf)
    n = platform.n_rotors
    links = {el.get("name"): el for el in tree.findall("link")}
    assert set(links) == {"base_link", *(f"mount{i}" for i in range(n)), *(f"prop{i}" for i in range(n))}
    assert all(el.find("inertial") is not None for el in links.values())
    joints = {el.get("name"): el.get("type") for el in tree.findall("joint")}
    assert joints == {**{f"mount{i}_fixed": "fixed" for i in range(n)}, **{f"spin{i}": "continuous" for i in range(n)}}
    compiler = tree.find("mujoco/compiler")
    assert compiler.get("fusestatic") == "false" and compiler.get("discardvisual") == "false"
    model = mujoco.MjModel.from_xml_string(urdf)
    assert {model.body(i).name for i in range(model.nbody)} == {"world", *links}  # no link fused away
    assert model.njnt == n and all(model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE for j in range(n))
    assert int(model.body("base_link").jntnum[0]) == 0  # the root is welded to the world
    masses = sum(float(el.find("inertial/mass").get("value")) for el in links.values())
    assert abs(masses - float(platform.mass)) <= TOL * float(platform.mass)
    # what each link carries: the MJCF body of the same name
    mj = mujoco.MjModel.from_xml_string(vehicle("x_quad_parts")[1])
    for name in links:
        body = "frame" if name == "base_link" else name
        assert abs(model.body(name).mass[0] - mj.body(body).mass[0]) <= 1e-15
    # the shapes are visual; the landing-gear feet collide, or without landing gear the hub
    assert VEHICLES["x_quad_parts"]().parts.landing_gear is None
    contact = [model.geom(g).name for g in range(model.ngeom) if model.geom_contype[g]]
    assert contact == ["hub_collision"]
    y6 = mujoco.MjModel.from_xml_string(vehicle("y6")[2])
    contact = [y6.geom(g).name for g in range(y6.ngeom) if y6.geom_contype[g]]
    assert len(contact) == 4 and all(nm.startswith("foot") for nm in contact)


@pytest.mark.parametrize("name", ["cs_a0_ting_6r", "two_hinge_hex"])
def test_tilt_hinges(name):
    platform, mj, urdf = vehicle(name)
    n = platform.n_rotors
    a0, b0 = (np.asarray(x, dtype=float) for x in per_rotor_angles(platform))
    gamma = np.asarray(platform.gamma, dtype=float)
    keys = [k for k in ("beta", "alpha") if k in platform.tilting]
    da, db = 0.1 * np.arange(n) - 0.25, 0.04 * np.arange(n) if "beta" in keys else np.zeros(n)
    expected_axes = np.asarray(rotor_axes(platform, alpha=a0 + da, beta=b0 + db))
    tree = ET.fromstring(urdf)
    types = {el.get("name"): el.get("type") for el in tree.findall("joint")}
    for kind, text in (("mjcf", mj), ("urdf", urdf)):
        model = mujoco.MjModel.from_xml_string(text)
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        q = np.array(model.qpos0)
        for i in range(n):
            R_arm = np.asarray(so3.rot_z(gamma[i]) @ so3.rot_y(b0[i]))
            for key, axis, design, d in (("beta", np.asarray(so3.rot_z(gamma[i]))[:, 1], b0[i], db[i]),
                                         ("alpha", R_arm[:, 0], a0[i], da[i])):
                if key not in keys:
                    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, f"{key}{i}") < 0
                    continue
                j = model.joint(f"{key}{i}")
                assert j.type[0] == mujoco.mjtJoint.mjJNT_HINGE
                assert np.abs(data.xaxis[j.id] - axis).max() <= TOL  # the hinge axis at the design pose, body frame
                # MJCF: qpos is the absolute angle, qpos0 the design; URDF: the angle relative to the design
                assert q[j.qposadr[0]] == pytest.approx(design if kind == "mjcf" else 0.0, abs=1e-15)
                q[j.qposadr[0]] += d
                if kind == "urdf":
                    assert types[f"{key}{i}"] == "revolute"
                    lo, hi = model.jnt_range[j.id]
                    assert lo == pytest.approx((-math.pi / 2 if key == "alpha" else 0.0) - design, abs=1e-12)
                    assert hi == pytest.approx(math.pi / 2 - design, abs=1e-12)
        pos, axes = robot.rotor_poses_of_model(model, q)
        assert np.abs(axes - expected_axes).max() <= TOL  # the hinges turn the rotors as eq. (4)
        assert np.abs(pos - np.asarray(rotor_positions(platform))).max() <= TOL
    if len(keys) == 2:
        assert {f"mount{i}_beta" for i in range(n)} <= {el.get("name") for el in tree.findall("link")}


def test_mjcf_actuators_are_the_physics_layers():
    platform = presets.get("cs_a0_ting_6r")
    mj = vehicle("cs_a0_ting_6r")[1]
    model = mujoco.MjModel.from_xml_string(mj)
    pm = build_model(platform, default_parts(platform))
    names = [model.actuator(i).name for i in range(model.nu)]
    assert names == [pm.model.actuator(i).name for i in range(pm.model.nu)]
    assert np.array_equal(model.actuator_gear, pm.model.actuator_gear)
    assert np.array_equal(model.actuator_trntype, pm.model.actuator_trntype)
    # servo gains as build_model sets them after compiling (its hub is shifted, the export's frame inertial is not)
    for field in ("actuator_gainprm", "actuator_biasprm"):
        a, b = getattr(model, field)[:, :3], getattr(pm.model, field)[:, :3]
        assert np.abs(a - b).max() <= 1e-9 * np.abs(b).max()
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor") >= 0
    assert "floor" not in robot.mjcf_text(platform, floor=False)
    # the platform's own parts: the physics layer's model is the export's, gains equal
    x8 = presets.get("x8")
    own = mujoco.MjModel.from_xml_string(vehicle("x8")[1])
    pm = build_model(x8, default_parts(x8))
    assert np.array_equal(own.actuator_gainprm, pm.model.actuator_gainprm)
    assert np.abs(own.body_inertia - pm.model.body_inertia).max() <= 1e-12 * pm.model.body_inertia.max()


def test_write_files(tmp_path):
    platform = VEHICLES["x_quad_parts"]()
    robot.write_mjcf(platform, tmp_path / "v.xml")
    robot.write_urdf(platform, str(tmp_path / "v.urdf"))
    for path in ("v.xml", "v.urdf"):
        model = mujoco.MjModel.from_xml_path(str(tmp_path / path))
        assert robot.mass_properties_of_model(model)[0] == pytest.approx(float(platform.mass), rel=TOL)
    assert (tmp_path / "v.xml").read_text() == vehicle("x_quad_parts")[1]
    assert ET.fromstring((tmp_path / "v.urdf").read_text()).get("name") == platform.name


def test_helpers_against_the_engine_away_from_rest():
    _, mj, _ = vehicle("two_hinge_hex")
    model = mujoco.MjModel.from_xml_string(mj)
    rng = np.random.default_rng(0)
    q = np.array(model.qpos0)
    q[:3] = rng.normal(size=3)
    q[3:7] = rng.normal(size=4)
    q[3:7] /= np.linalg.norm(q[3:7])
    q[7:] += 0.2 * rng.normal(size=model.nq - 7)
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_forward(model, data)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    R = data.body("frame").xmat.reshape(3, 3)
    c_ref = R.T @ (data.subtree_com[1] - data.body("frame").xpos)  # local frame, as the free joint's block
    m, c, J = robot.mass_properties_of_model(model, q)
    assert m == pytest.approx(M[0, 0], rel=1e-12)
    assert np.abs(c - c_ref).max() <= 1e-12
    assert np.abs(J - (M[3:6, 3:6] - m * (c @ c * np.eye(3) - np.outer(c, c)))).max() <= 1e-12


def test_errors(tmp_path):
    platform = VEHICLES["x_quad_parts"]()
    with pytest.raises(ValueError, match="path.*does not exist"):
        robot.write_urdf(platform, tmp_path / "missing" / "v.urdf")
    with pytest.raises(ValueError, match="path.*not a path"):
        robot.write_mjcf(platform, 3.5)
    with pytest.raises(ValueError, match="`name`"):
        robot.urdf_text(platform, name="")
    with pytest.raises(ValueError, match="unknown option.*'spinn'"):
        robot.mjcf_text(platform, spinn=False)
    with pytest.raises(ValueError, match="`timestep`"):
        robot.mjcf_text(platform, timestep=-1.0)
    with pytest.raises(ValueError, match="`platform`"):
        robot.urdf_text("x500")
    with pytest.raises(ValueError, match="`parts`"):
        robot.mjcf_text(platform, parts={"hub": 1})
    # J^p (planar, J_z = J_x + J_y) on the Table II parts, whose mounts and propellers have height: no frame body
    with pytest.raises(ValueError, match="paper_hexarotor_physics.*Fix"):
        robot.mjcf_text(presets.get("paper_hexarotor_physics"))
    empty = mujoco.MjModel.from_xml_string("<mujoco><worldbody><body name='b'><geom size='0.1'/></body></worldbody>"
                                           "</mujoco>")
    with pytest.raises(ValueError, match="prop0"):
        robot.rotor_poses_of_model(empty)
    with pytest.raises(ValueError, match="`root`"):
        robot.mass_properties_of_model(empty, root="frame")
    with pytest.raises(ValueError, match="`qpos`"):
        robot.mass_properties_of_model(empty, qpos=np.zeros(3))
