"""The calling convention every public callable follows (CONTRIBUTING.md, "One calling convention")."""

import importlib
import inspect
import math
import pkgutil

import pytest

import noisecore

# A family's defining parameters, in the papers' order, may be positional; everything else after the
# first argument is keyword-only.
FAMILY_PARAMETERS = {
    "Arete": ("alpha", "theta", "lam"),
    "AreteShare": ("alpha", "theta", "lam", "n"),  # a frozen dataclass: its fields
    "AreteKernel": ("alpha", "theta", "lam"),
    "ShareSum": ("a", "theta", "b", "lam"),
    "MixtureBoundary": ("delta", "rho"),
    "LinearBoundary": ("delta", "a"),
    "dropout_point": ("alpha", "theta", "lam"),
    "split": ("X", "y"),
    "LogisticRegressionTask": ("X", "y"),
    "RidgeRegressionTask": ("X", "y"),
    "table_task_data": ("names", "values"),
    "check_data": ("X", "y"),
    "level_grid": ("low", "high"),
}
OLD_CALIBRATION_NAMES = ("for_epsilon", "analytic", "classic", "optimized_for", "time_for")
APP_MODULES = ("dashboard.scenarios", "dashboard.explorer", "dashboard.notebook")


def _public_callables():
    names = [m.name for m in pkgutil.walk_packages(noisecore.__path__, "noisecore.")]
    modules = [importlib.import_module(name) for name in names if "._" not in name]  # not private modules
    modules += [noisecore, *(importlib.import_module(name) for name in APP_MODULES)]
    seen = {}
    for module in modules:
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isclass(obj):
                if inspect.isclass(obj) and hasattr(obj, "__dataclass_fields__") and name not in FAMILY_PARAMETERS:
                    continue  # a result record: built by the code, read by callers
                seen[f"{module.__name__}.{name}"] = (name, obj)
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or not callable(getattr(obj, attr)) or isinstance(member, property):
                        continue
                    seen[f"{module.__name__}.{name}.{attr}"] = (attr, getattr(obj, attr))
            elif inspect.isfunction(obj):
                seen[f"{module.__name__}.{name}"] = (name, obj)
    return seen


CALLABLES = _public_callables()


def _parameters(obj):
    params = list(inspect.signature(obj).parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    return params


def test_the_sweep_covers_the_public_api():
    assert len(CALLABLES) > 100
    for name in (
        "noisecore.arete.Arete.calibrated",
        "noisecore.experiments.run_experiment",
        "dashboard.scenarios.rat_study",
        "noisecore.tasks.data.synthetic_regression",
    ):
        assert name in CALLABLES


@pytest.mark.parametrize("qualified", sorted(CALLABLES))
def test_keyword_only_after_the_first_argument(qualified):
    name, obj = CALLABLES[qualified]
    positional = [p.name for p in _parameters(obj) if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    allowed = FAMILY_PARAMETERS.get(name, ())
    extra = [p for p in positional[1:] if p not in allowed]
    assert not extra, f"{qualified}: {extra} should be keyword-only"


@pytest.mark.parametrize("qualified", sorted(CALLABLES))
def test_randomness_is_rng_and_keyword_only(qualified):
    _, obj = CALLABLES[qualified]
    params = {p.name: p for p in _parameters(obj)}
    assert "seed" not in params, f"{qualified} takes seed=; the convention is rng="
    if "rng" in params and next(iter(params)) != "rng":  # rng may be the one argument of a converter
        assert params["rng"].kind == inspect.Parameter.KEYWORD_ONLY, f"{qualified}: rng must be keyword-only"


def test_one_calibration_vocabulary():
    old = [q for q in CALLABLES if q.rsplit(".", 1)[-1] in OLD_CALIBRATION_NAMES]
    assert not old, f"old calibration names remain: {old}"
    from noisecore import Arete, Gaussian, Laplace, LinearBoundary, MixtureBoundary

    for cls in (Arete, Gaussian, Laplace, LinearBoundary, MixtureBoundary):
        assert "epsilon" in inspect.signature(cls.calibrated).parameters


def test_gaussian_calibration_methods():
    from noisecore import Gaussian

    # classic: sigma = sqrt(2 ln(1.25/delta)) / epsilon (Dwork & Roth, Theorem A.1)
    assert Gaussian.calibrated(0.5, delta=1e-5, method="classic").sigma == pytest.approx(
        math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-14
    )
    with pytest.raises(ValueError, match="method"):
        Gaussian.calibrated(0.5, delta=1e-5, method="exact")
    with pytest.raises(TypeError, match="method"):
        Gaussian.calibrated(0.5, delta=1e-5, method=None)
    with pytest.raises(TypeError):
        Gaussian.calibrated(0.5, 1e-5)  # delta is keyword-only


def _parameter_names(func):
    func = func.__func__ if isinstance(func, classmethod | staticmethod) else func
    return [p for p in inspect.signature(func).parameters if p not in ("self", "cls")]


def _restates_a_base(cls, attr):
    """``attr`` overrides a method of a noisecore base class with the same parameters: the base's
    documentation applies (numpydoc text is not repeated on every subclass)."""
    member = vars(cls)[attr]
    if isinstance(member, property) or not callable(getattr(cls, attr)):
        return False
    for base in cls.__mro__[1:]:
        if base.__module__.startswith("noisecore") and attr in vars(base):
            return _parameter_names(member) == _parameter_names(vars(base)[attr])
    return False


def _core_members():
    """The public API: the names in ``__all__`` of noisecore and of each of its modules, and the public
    methods and properties their classes define or inherit from noisecore. Private helpers need one
    docstring line only; so does an override with its base's parameters."""
    names = [m.name for m in pkgutil.walk_packages(noisecore.__path__, "noisecore.")]
    for module in [noisecore, *(importlib.import_module(name) for name in names)]:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # constants and type aliases
            yield f"{module.__name__}.{name}", obj
            if not inspect.isclass(obj):
                continue
            for owner in (c for c in obj.__mro__ if c.__module__.startswith("noisecore")):
                for attr, member in vars(owner).items():
                    if attr.startswith("_") or _restates_a_base(owner, attr):
                        continue
                    where = f"{owner.__module__}.{owner.__qualname__}.{attr}"
                    if isinstance(member, property):
                        yield where, member.fget
                    elif inspect.isfunction(member) or isinstance(member, classmethod | staticmethod):
                        yield where, getattr(owner, attr)


def test_every_public_function_of_the_core_has_numpydoc_sections():
    members = dict(_core_members())
    assert len(members) > 150
    problems = []
    for qualified, obj in members.items():
        doc = inspect.getdoc(obj) or ""
        if not doc:
            problems.append(f"{qualified}: no docstring")
        elif not inspect.isclass(obj) and callable(obj):
            params = [p for p in inspect.signature(obj).parameters if p not in ("self", "cls")]
            if params and "Parameters\n----------" not in doc:
                problems.append(f"{qualified}: no Parameters section")
    assert not problems, "\n".join(problems)
