"""Plugin discovery, guarded loading, the environment switches and the plugin listing.

Two sources of plugins:
- the real ``oprt`` entry points of ``tests/plugins/oprt-testplugin`` (installed into the test environment;
  these tests skip when it is missing),
- fake ``importlib.metadata.EntryPoint`` objects pointing at the modules in ``tests/plugins/fake``,
  passed straight to ``OprtPluginManager.load_oprt_entrypoints``.
"""

from __future__ import annotations

import inspect
import re
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import oprt_core
from oprt_core import builtin, hookimpl, hookspecs, numpy_plugin, operators, ops
from oprt_core.errors import OprtError, PluginLoadError, UnknownNameError
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.plugins import (
    ENTRY_POINT_GROUP,
    OprtPluginManager,
    PluginInfo,
    Registry,
    get_plugin_manager,
    list_plugins,
)

TESTS = Path(__file__).resolve().parents[1]
FAKE_DIR = TESTS / "plugins" / "fake"
# the built-in plugin "core" registers every op folder's op: the core ops, the model ops and the compute-bound ops
BUILTIN_OPS = list(operators.names())
ENV_VARS = ("OPRT_DISABLE_PLUGIN_AUTOLOAD", "OPRT_PLUGINS", "OPRT_DISABLED_PLUGINS")


def _testplugin_installed() -> bool:
    try:
        metadata.distribution("oprt-testplugin")
    except metadata.PackageNotFoundError:
        return False
    return True


needs_testplugin = pytest.mark.skipif(
    not _testplugin_installed(),
    reason="distribution oprt-testplugin is not installed; run `pip install ./tests/plugins/oprt-testplugin` "
           "(tox and CI do)",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    """Every test starts from the default plugin environment, whatever the caller's shell sets."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def fake_path(monkeypatch):
    monkeypatch.syspath_prepend(str(FAKE_DIR))
    return FAKE_DIR


def ep(name: str, module: str) -> metadata.EntryPoint:
    return metadata.EntryPoint(name=name, value=module, group=ENTRY_POINT_GROUP)


NUMPY_EP = ep("numpy", "oprt_core.numpy_plugin")
FAKE_GOOD = ep("fakegood", "oprt_fake_good")
FAKE_BROKEN = ep("fakebroken", "oprt_fake_broken")
FAKE_RAISES = ep("fakeraises", "oprt_fake_raises")
FAKE_DUP = ep("fakedup", "oprt_fake_dup")
FAKE_SECOND = ep("fakesecond", "oprt_fake_second")
FAKE_BADNAME = ep("fakebadname", "oprt_fake_badname")
ALL_FAKES = [NUMPY_EP, FAKE_GOOD, FAKE_BROKEN, FAKE_RAISES, FAKE_DUP, FAKE_SECOND, FAKE_BADNAME]


def fake_registry(entry_points) -> Registry:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.load_oprt_entrypoints(entry_points)
    return Registry(pm)


def info(reg: Registry, name: str) -> PluginInfo:
    rows = {p.name: p for p in list_plugins(reg)}
    assert name in rows, f"plugin {name!r} not listed; listed: {sorted(rows)}"
    return rows[name]


def assert_load_error(row: PluginInfo, cause: type[BaseException], text: str, distribution: str | None) -> None:
    err = row.error
    assert isinstance(err, PluginLoadError) and isinstance(err, OprtError)
    assert err.name == row.name
    assert err.distribution == distribution
    assert isinstance(err.cause, cause)
    assert text in str(err.cause)
    msg = str(err)
    assert row.name in msg and cause.__name__ in msg and text in msg
    if distribution:
        assert distribution in msg
    assert row.backends == [] and row.ops == []


# -------------------------------------------------------------------------------------------------
# real entry points of the installed test plugin


@needs_testplugin
def test_real_entry_points_are_discovered():
    names = {e.name for e in metadata.entry_points(group="oprt")}
    assert {"numpy", "testbackend", "testbroken", "testraises", "testduplicate"} <= names
    reg = Registry(get_plugin_manager())
    assert "testbackend" in reg.backends and reg.backends["testbackend"].name == "testbackend"
    assert "negate" in reg.ops
    assert set(BUILTIN_OPS) <= set(reg.ops)
    row = info(reg, "testbackend")
    assert row.distribution == "oprt-testplugin"
    assert row.version == metadata.version("oprt-testplugin")
    assert row.backends == ["testbackend"] and row.ops == ["negate"] and row.error is None


@needs_testplugin
def test_real_broken_and_raising_plugins_are_reported_while_others_load():
    import oprt_testplugin

    reg = Registry(get_plugin_manager())
    assert_load_error(info(reg, "testbroken"), ImportError, oprt_testplugin.BROKEN_IMPORT_MESSAGE, "oprt-testplugin")
    assert_load_error(info(reg, "testraises"), RuntimeError, oprt_testplugin.RAISING_HOOK_MESSAGE, "oprt-testplugin")
    # the others still load
    assert {"numpy", "testbackend"} <= set(reg.backends)
    assert info(reg, "numpy").error is None and info(reg, "core").error is None
    assert {e.name for e in reg.pm.load_errors} == {"testbroken", "testraises", "testduplicate"}


@needs_testplugin
def test_real_duplicate_backend_is_reported_on_the_later_plugin():
    reg = Registry(get_plugin_manager())
    row = info(reg, "testduplicate")
    assert_load_error(row, ValueError, "'numpy' is already registered by plugin 'numpy'", "oprt-testplugin")
    # the core numpy backend keeps its name
    assert type(reg.backends["numpy"]) is NumpyBackend
    assert reg.owner[("backend", "numpy")] == "numpy"
    assert info(reg, "numpy").backends == ["numpy"]
    assert info(reg, "numpy").distribution == "oprt-core"


@needs_testplugin
def test_real_plugin_backend_runs_its_own_op():
    reg = Registry(get_plugin_manager())
    spec, be = reg.get_op("negate"), reg.get_backend("testbackend")
    assert be.availability().ok and be.supports("negate", "f32").ok
    for case_set in ("smoke", "default", "edge"):
        for i, case in enumerate(spec.cases(case_set)):
            for dtype in spec.dtypes:
                inputs = spec.make_inputs(case, dtype, np.random.default_rng(i))
                out = be.empty(spec.output_shape([x.shape for x in inputs], {}), dtype)
                be.fill_nan(out)
                be.prepare("negate", [be.to_device(x) for x in inputs], out, {})()
                res = spec.check(be.to_host(out), inputs, dtype)
                assert res.ok, f"{case} {dtype}: {res.message}"
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ops.run("negate", [x], backend="testbackend", registry=reg), -x)


@needs_testplugin
def test_real_disabled_plugins(monkeypatch):
    monkeypatch.setenv("OPRT_DISABLED_PLUGINS", "testbroken, testraises")
    reg = Registry(get_plugin_manager())
    names = {p.name for p in list_plugins(reg)}
    assert "testbroken" not in names and "testraises" not in names
    assert {"numpy", "testbackend", "testduplicate", "core"} <= names
    assert {e.name for e in reg.pm.load_errors} == {"testduplicate"}


@needs_testplugin
def test_real_disable_autoload(monkeypatch):
    monkeypatch.setenv("OPRT_DISABLE_PLUGIN_AUTOLOAD", "1")
    reg = Registry(get_plugin_manager())
    assert [p.name for p in list_plugins(reg)] == ["core"]
    assert reg.backends == {} and set(reg.ops) == set(BUILTIN_OPS)
    monkeypatch.setenv("OPRT_PLUGINS", "numpy,testbackend")
    reg = Registry(get_plugin_manager())
    assert {p.name for p in list_plugins(reg)} == {"core", "numpy", "testbackend"}
    assert set(reg.backends) == {"numpy", "testbackend"}
    assert reg.pm.load_errors == []


@needs_testplugin
def test_list_plugins_default_registry_rows():
    rows = list_plugins()  # the process-wide registry
    by_name = {r.name: r for r in rows}
    assert {"core", "numpy", "testbackend", "testbroken"} <= set(by_name)
    assert by_name["core"].ops == BUILTIN_OPS and by_name["core"].distribution == "oprt-core"
    assert by_name["core"].version == oprt_core.__version__
    assert by_name["numpy"].version == metadata.version("oprt-core")


# -------------------------------------------------------------------------------------------------
# fake entry points


def test_fake_entry_points_discovery(fake_path):
    reg = fake_registry([NUMPY_EP, FAKE_GOOD])
    assert set(reg.backends) == {"numpy", "fakebackend"}
    assert set(reg.ops) == set(BUILTIN_OPS) | {"fake_double"}
    row = info(reg, "fakegood")
    assert row.backends == ["fakebackend"] and row.ops == ["fake_double"] and row.error is None
    assert row.distribution is None and row.version is None  # a bare EntryPoint has no distribution
    assert reg.owner[("op", "fake_double")] == "fakegood"
    assert reg.get_backend("fakebackend").name == "fakebackend"
    x = np.array([1.5, -2.0], np.float32)
    np.testing.assert_array_equal(ops.run("copy", [x], backend="fakebackend", registry=reg), x)


def test_fake_failures_are_reported_while_others_load(fake_path):
    reg = fake_registry(ALL_FAKES)
    assert_load_error(info(reg, "fakebroken"), ImportError, "deliberate failure at import", None)
    assert_load_error(info(reg, "fakeraises"), RuntimeError, "deliberate failure in oprt_register_ops", None)
    assert_load_error(info(reg, "fakedup"), ValueError, "op name 'copy' is already registered by plugin 'core'",
                      None)
    assert_load_error(info(reg, "fakesecond"), ValueError,
                      "backend name 'fakebackend' is already registered by plugin 'fakegood'", None)
    assert_load_error(info(reg, "fakebadname"), TypeError, "needs a non-empty str .name", None)
    # the good ones are untouched
    assert set(reg.backends) == {"numpy", "fakebackend"}
    assert set(reg.ops) == set(BUILTIN_OPS) | {"fake_double"}
    assert reg.owner[("op", "copy")] == "core" and reg.owner[("backend", "numpy")] == "numpy"
    assert reg.owner[("backend", "fakebackend")] == "fakegood"
    assert {e.name for e in reg.pm.load_errors} == {"fakebroken", "fakeraises", "fakedup", "fakesecond",
                                                   "fakebadname"}
    # a broken import leaves no half-registered plugin behind
    assert reg.pm.get_plugin("fakebroken") is None


@pytest.mark.parametrize("order", [("fakegood", "fakesecond"), ("fakesecond", "fakegood")])
def test_duplicate_name_is_reported_on_the_later_plugin(fake_path, order):
    eps = {"fakegood": FAKE_GOOD, "fakesecond": FAKE_SECOND}
    reg = fake_registry([eps[n] for n in order])
    first, later = order
    assert info(reg, first).error is None and info(reg, first).backends == ["fakebackend"]
    assert_load_error(info(reg, later), ValueError, f"already registered by plugin {first!r}", None)
    assert reg.owner[("backend", "fakebackend")] == first
    # a plugin that fails contributes nothing: fakegood's op goes with its refused backend
    assert ("fake_double" in reg.ops) == (first == "fakegood")


def test_core_names_win_over_a_plugin_loaded_first(fake_path):
    """Even when a plugin reusing core names is loaded before oprt-core's own, the plugin is the one reported."""
    pm = OprtPluginManager()
    pm.load_oprt_entrypoints([FAKE_DUP])
    pm.register_plugin(builtin, "core", "oprt-core")
    pm.register_plugin(numpy_plugin, "numpy", "oprt-core")
    reg = Registry(pm)
    assert reg.owner[("op", "copy")] == "core" and reg.owner[("backend", "numpy")] == "numpy"
    assert isinstance(info(reg, "fakedup").error, PluginLoadError)


def test_loading_the_same_entry_points_twice_is_harmless(fake_path):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.load_oprt_entrypoints([NUMPY_EP, FAKE_GOOD])
    pm.load_oprt_entrypoints([NUMPY_EP, FAKE_GOOD])
    reg = Registry(pm)
    assert set(reg.backends) == {"numpy", "fakebackend"} and pm.load_errors == []


def test_blocked_entry_point_is_skipped(fake_path):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.set_blocked("fakegood")
    pm.load_oprt_entrypoints([NUMPY_EP, FAKE_GOOD])
    assert "fakebackend" not in Registry(pm).backends


def test_disabled_plugins_env(fake_path, monkeypatch):
    monkeypatch.setenv("OPRT_DISABLED_PLUGINS", "fakebroken,fakeraises")
    reg = fake_registry([NUMPY_EP, FAKE_GOOD, FAKE_BROKEN, FAKE_RAISES])
    names = {p.name for p in list_plugins(reg)}
    assert names == {"core", "numpy", "fakegood"}
    assert reg.pm.load_errors == []
    monkeypatch.setenv("OPRT_DISABLED_PLUGINS", "numpy")
    reg = fake_registry([NUMPY_EP, FAKE_GOOD])
    assert set(reg.backends) == {"fakebackend"}
    with pytest.raises(UnknownNameError, match="unknown backend 'numpy'; valid choices: fakebackend"):
        reg.get_backend("numpy")


@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_disable_autoload_env(fake_path, monkeypatch, value):
    monkeypatch.setenv("OPRT_DISABLE_PLUGIN_AUTOLOAD", value)
    reg = fake_registry([NUMPY_EP, FAKE_GOOD, FAKE_BROKEN])
    assert [p.name for p in list_plugins(reg)] == ["core"]
    assert reg.backends == {} and set(reg.ops) == set(BUILTIN_OPS)


def test_disable_autoload_with_explicit_plugins(fake_path, monkeypatch):
    monkeypatch.setenv("OPRT_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("OPRT_PLUGINS", "numpy, fakebroken")
    reg = fake_registry([NUMPY_EP, FAKE_GOOD, FAKE_BROKEN])
    assert {p.name for p in list_plugins(reg)} == {"core", "numpy", "fakebroken"}
    assert set(reg.backends) == {"numpy"}
    assert [e.name for e in reg.pm.load_errors] == ["fakebroken"]
    # disabling wins over naming it explicitly
    monkeypatch.setenv("OPRT_DISABLED_PLUGINS", "fakebroken")
    reg = fake_registry([NUMPY_EP, FAKE_GOOD, FAKE_BROKEN])
    assert {p.name for p in list_plugins(reg)} == {"core", "numpy"}


def test_empty_autoload_value_means_enabled(fake_path, monkeypatch):
    monkeypatch.setenv("OPRT_DISABLE_PLUGIN_AUTOLOAD", "")
    reg = fake_registry([NUMPY_EP, FAKE_GOOD])
    assert set(reg.backends) == {"numpy", "fakebackend"}


def test_list_plugins_rows(fake_path):
    reg = fake_registry(ALL_FAKES)
    rows = list_plugins(reg)
    assert {r.name for r in rows} == {"core"} | {e.name for e in ALL_FAKES}
    keys = {"name", "distribution", "version", "backends", "ops", "error"}
    for row in rows:
        d = row.to_dict()
        assert set(d) == keys
        assert isinstance(d["name"], str) and isinstance(d["backends"], list) and isinstance(d["ops"], list)
        assert d["error"] is None or (isinstance(d["error"], str) and row.name in d["error"])
    core = info(reg, "core").to_dict()
    assert core == {"name": "core", "distribution": "oprt-core", "version": oprt_core.__version__,
                    "backends": [], "ops": BUILTIN_OPS, "error": None}
    broken = info(reg, "fakebroken").to_dict()
    assert broken["error"].startswith("plugin 'fakebroken' failed to load: ImportError:")


# -------------------------------------------------------------------------------------------------
# in-process plugins (get_plugin_manager(load_entrypoints=False))


class _InProcBackend(NumpyBackend):
    name = "inproc"


class InProcPlugin:
    """An in-process plugin object (not a module) with both hooks."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def oprt_register_backends(self, register) -> None:
        self.calls.append("backends")
        register(_InProcBackend())

    @hookimpl
    def oprt_register_ops(self, register) -> None:
        self.calls.append("ops")


@pytest.fixture
def inproc_pm():
    pm = get_plugin_manager(load_entrypoints=False)
    plugin = InProcPlugin()
    pm.register_plugin(plugin, "inproc", "in-process", "0")
    try:
        yield pm, plugin
    finally:
        pm.unregister(name="inproc")
        pm.plugin_info.pop("inproc", None)


def test_in_process_plugin(inproc_pm):
    pm, plugin = inproc_pm
    assert pm.load_errors == []
    reg = Registry(pm)
    assert plugin.calls == ["ops", "backends"]  # each hook called once, ops first
    assert set(reg.backends) == {"inproc"} and set(reg.ops) == set(BUILTIN_OPS)
    row = info(reg, "inproc")
    assert (row.distribution, row.version, row.backends, row.ops) == ("in-process", "0", ["inproc"], [])
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(ops.run("relu", [x], backend="inproc", registry=reg), np.maximum(x, 0))


def test_in_process_plugin_unregistered(inproc_pm):
    pm, _ = inproc_pm
    pm.unregister(name="inproc")
    pm.plugin_info.pop("inproc")
    reg = Registry(pm)
    assert reg.backends == {}
    with pytest.raises(UnknownNameError, match=r"unknown backend 'inproc'; valid choices: \(none\)"):
        reg.get_backend("inproc")
    pm.register_plugin(InProcPlugin(), "inproc")  # the fixture's finally unregisters it again
    assert "inproc" in Registry(pm).backends


def test_get_plugin_manager_is_a_factory():
    a, b = get_plugin_manager(load_entrypoints=False), get_plugin_manager(load_entrypoints=False)
    assert a is not b and isinstance(a, OprtPluginManager)
    assert a.project_name == "oprt" and ENTRY_POINT_GROUP == "oprt"
    assert [p.name for p in a.plugin_info.values()] == ["core"]


# -------------------------------------------------------------------------------------------------
# the hookspecs contract


def _hookspec_functions():
    names = [n for n in hookspecs.__all__ if n.startswith("oprt_")]
    assert names, "hookspecs.__all__ lists no hooks"
    return [(n, getattr(hookspecs, n)) for n in names]


def test_every_hookspec_is_exported_and_marked():
    defined = {n for n, f in vars(hookspecs).items() if n.startswith("oprt_") and callable(f)}
    assert defined == {n for n, _ in _hookspec_functions()}, "hook defined in oprt_core.hookspecs but not in __all__"
    pm = OprtPluginManager()
    for name, func in _hookspec_functions():
        assert getattr(func, "oprt_spec", None) is not None, f"{name} lacks the @hookspec marker"
        assert hasattr(pm.hook, name)


@pytest.mark.parametrize("name", [n for n in hookspecs.__all__ if n.startswith("oprt_")])
def test_every_hookspec_is_documented_and_tested(name):
    func = getattr(hookspecs, name)
    doc = inspect.getdoc(func) or ""
    assert doc.strip(), f"hookspec {name} has no docstring"
    for arg in inspect.signature(func).parameters:
        assert re.search(rf":param {arg}:\s*\S", doc), f"hookspec {name} does not document argument {arg!r}"
    # tested: some plugin under tests/ implements it (and is loaded by the tests above)
    impl = re.compile(rf"def {name}\(")
    files = [p for p in TESTS.rglob("*.py") if impl.search(p.read_text(encoding="utf-8"))]
    assert files, f"hookspec {name} is not implemented by any plugin under tests/"


# -------------------------------------------------------------------------------------------------
# oprt_register_impls: an op package gives implementations to backends other plugins own


def _triple_spec():
    from oprt_core import Budget, Case, OpSpec, TensorCase

    return OpSpec(
        name="triple", doc="out = 3 * x (test op)", n_inputs=1, input_names=("x",),
        reference_fn=lambda x: 3 * x, bytes_fn=lambda case, dt: 2 * case.numel * dt.itemsize,
        flops_fn=lambda case: case.numel, budgets={d: Budget(0.0, 0.0) for d in ("f32", "f16", "bf16")},
        case_sets={s: [Case("triple", "7", (TensorCase((7,)),))] for s in ("smoke", "default", "large", "edge")},
    )


def _triple(inputs, out, params) -> None:
    np.multiply(inputs[0], 3, out=out)


class ImplPlugin:
    """An op package: op ``triple`` and its implementations for other plugins' backends."""

    def __init__(self, pairs=(("numpy", "triple"),), raises: bool = False, with_op: bool = True) -> None:
        self.pairs, self.raises, self.with_op = pairs, raises, with_op

    @hookimpl
    def oprt_register_ops(self, register) -> None:
        if self.with_op:
            register(_triple_spec())

    @hookimpl
    def oprt_register_impls(self, register) -> None:
        for backend, op in self.pairs:
            register(backend, op, _triple)
        if self.raises:
            raise RuntimeError("deliberate failure in oprt_register_impls")


class _NoAddOpBackend:
    name = "noaddop"


class NoAddOpPlugin:
    @hookimpl
    def oprt_register_backends(self, register) -> None:
        register(_NoAddOpBackend())


def _impl_registry(*plugins) -> Registry:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(numpy_plugin, "numpy", "oprt-core")
    for i, plugin in enumerate(plugins):
        pm.register_plugin(plugin, f"impl{i}")
    return Registry(pm)


def test_register_impls_teaches_a_backend_of_another_plugin():
    reg = _impl_registry(ImplPlugin())
    be = reg.get_backend("numpy")
    assert be.supports("triple", "f32").ok
    assert reg.impls[("numpy", "triple")] is _triple and reg.unused_impls == {}
    assert {pair for pair in reg.impls if pair[1] not in operators.names()} == {("numpy", "triple")}
    assert reg.owner[("impl", "triple@numpy")] == "impl0"
    assert info(reg, "impl0").impls == ["triple@numpy"] and info(reg, "impl0").ops == ["triple"]
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(ops.run("triple", [x], backend="numpy", registry=reg), 3 * x)
    # a registry without the op package has a numpy backend that does not know the op
    assert not _impl_registry().get_backend("numpy").supports("triple", "f32").ok


def test_register_impls_unused_pairs_are_listed_not_fatal():
    reg = _impl_registry(ImplPlugin(pairs=(("numpy", "triple"), ("nosuch", "triple"), ("numpy", "nosuchop"),
                                           ("noaddop", "triple"))), NoAddOpPlugin())
    assert reg.pm.load_errors == []
    assert reg.unused_impls == {
        ("nosuch", "triple"): "backend 'nosuch' is not registered",
        ("numpy", "nosuchop"): "op 'nosuchop' is not registered",
        ("noaddop", "triple"): "backend 'noaddop' (_NoAddOpBackend) has no add_op(spec, impl): "
                               "it takes no implementations from plugins",
    }
    assert reg.get_backend("numpy").supports("triple", "f32").ok
    assert not reg.get_backend("numpy").supports("nosuchop", "f32").ok


def test_register_impls_duplicate_pair_is_the_later_plugins_error():
    reg = _impl_registry(ImplPlugin(), ImplPlugin(with_op=False))
    assert_load_error(info(reg, "impl1"), ValueError,
                      "an implementation of op 'triple' for backend 'numpy' is already registered by plugin 'impl0'",
                      None)
    assert info(reg, "impl1").impls == [] and info(reg, "impl0").impls == ["triple@numpy"]
    assert reg.get_backend("numpy").supports("triple", "f32").ok


def test_register_impls_raising_hook_withdraws_everything_of_that_plugin():
    reg = _impl_registry(ImplPlugin(raises=True))
    row = info(reg, "impl0")
    assert_load_error(row, RuntimeError, "deliberate failure in oprt_register_impls", None)
    assert row.impls == [] and "triple" not in reg.ops and {op for _, op in reg.impls} == set(operators.names())
    assert not reg.get_backend("numpy").supports("triple", "f32").ok


@pytest.mark.parametrize("args, text", [((1, "triple", _triple), "non-empty str backend and op names"),
                                        (("numpy", "", _triple), "non-empty str backend and op names"),
                                        (("numpy", "triple", "not callable"), "is not callable")])
def test_register_impls_bad_arguments(args, text):
    class Bad:
        @hookimpl
        def oprt_register_impls(self, register) -> None:
            register(*args)

    reg = _impl_registry(Bad())
    assert_load_error(info(reg, "impl0"), TypeError, text, None)
