"""Shared set-ups, declared and injected: pytest's fixtures, for claims.

A set-up that several checks read (a bank of training runs, a batch of Monte Carlo draws, a solved max-margin
problem) is a **fixture**: a function the runner calls, once per run and parameters, whose value it passes to every
check that names it::

    @fixture                                          # scope "run": depends on the run's seed and budget
    def trajectory_bank(ctx, spread=0.0): ...

    Check("every-step", "numeric", "...", check_steps, uses={"bank": trajectory_bank})
    Control("Ass 2 broken", "every-step", "...", {"bank": trajectory_bank.bind(spread=0.5)})

* **Injected, never called.**  ``check_steps(ctx, bank, ...)`` receives the value as its parameter ``bank``; calling
  a fixture directly is an error.  A check's signature and its ``uses`` show everything it depends on.
* **Parameters are free choices.**  ``fixture.bind(**params)`` is a request for the fixture at other parameters (sizes,
  step sizes, horizons, an algorithm as a transform object, another fixture request for one it uses); a check or a
  control that varies one gets that value, never a stale one.  :func:`per_budget` gives a parameter one value per
  budget.  Parameters are checked against the function's signature when bound.
* **Lists of requests.**  A parameter bound (or named in ``uses``) to a list or tuple of fixture requests receives
  the list (tuple) of their values, in its order: a gatherer of several runs
  (``runs.bind(each=[bank.bind(steps=s) for s in STEPS])``, ``def runs(ctx, each): ...``).  Each request is a
  dependency of its own, computed and shared as any other (a control that replaces some of the list shares the rest).
* **Keyed by value.**  A value is keyed by its fixture, its parameters and the run, never by an object's identity: a
  plain value (number, string, ``None``) by itself; a tuple, list or frozenset, a named tuple and a frozen dataclass
  by its type and items (recursively); a module-level function or class by its name; a closure or lambda by its code
  and the values it captures (a ``numerics.optim`` transform is a named tuple of such closures, so two transforms
  built alike are one key).  ``bind`` refuses any other value (a tensor, a mutable object) with one line naming the
  parameter.  Two requests with equal keys share one value.
* **Scopes.**  ``"run"``: the function takes the run's context first (``fn(ctx, **uses, **params)``) and its value
  is keyed by the run (seed, budget, device) and its parameters.  ``"static"``: no context (a symbolic derivation, a
  fixed problem), keyed by its parameters only.
* **Randomness.**  A fixture's random stream is seeded from the run's seed and the keys the fixture's code passes to
  ``ctx.generator(*keys)`` (or ``ctx.derived_seed(*keys)``): a name of its own and those of its parameters it names
  there, hashed together (``theorems.context.Context.derived_seed``).  Nothing else enters it: not the budget, the
  device, which checks ran before or on which worker, and not a parameter the code does not name, so two values of
  such a parameter draw the same numbers (a step size or a horizon varied on the same draws).
* **Sharing belongs to the runner.**  :class:`Memo` computes each (fixture, parameters, run) once and drops it after
  its last consumer; ``verify.execution`` does the same with one Dask future per fixture value.  No module keeps
  fixture values: a value is shared by reference and must not be modified (the runner cannot copy every tensor).

Bad declarations are refused at import with one line: a ``uses`` name the function does not take, a parameter it does
not take, a parameter value with nothing to key it by, a list mixing requests and values, a fixture that (through
``bind``) depends on itself.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import inspect
import types
from types import MappingProxyType
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping

from theorems.context import Context

Scope = Literal["run", "static"]
SCOPES = ("run", "static")


@dataclass(frozen=True)
class PerBudget:
    """A parameter value per budget (``per_budget(2000, 6000)``), picked with the run's budget before the fixture is
    called and before its value is keyed (so two requests that pick the same number share one value)."""

    quick: Any
    standard: Any
    full: Any


def per_budget(quick: Any, standard: Any, full: Any | None = None) -> PerBudget:
    """One value per budget; ``full`` defaults to ``standard`` (as ``Context.pick``)."""
    return PerBudget(quick, standard, standard if full is None else full)


def _lookup(module: str, qualname: str) -> "Fixture":
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True, eq=False)
class Fixture:
    """A declared set-up (see the module docstring); made by :func:`fixture`."""

    fn: Callable[..., Any]
    scope: Scope = "run"
    uses: Mapping[str, Any] = field(default_factory=dict)  # name -> a request, or a list (tuple) of requests

    def __post_init__(self):
        if self.scope not in SCOPES:
            raise ValueError(f"fixture {self.name}: unknown scope {self.scope!r} (one of {', '.join(SCOPES)})")
        object.__setattr__(self, "uses", MappingProxyType({k: _dependency(v) for k, v in self.uses.items()}))
        takes = self._parameters()
        unknown = sorted(set(self.uses) - set(takes))
        if unknown:
            raise ValueError(f"fixture {self.name} uses {', '.join(unknown)}, which {self.fn.__name__} does not take")

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    @property
    def short_name(self) -> str:
        return self.fn.__qualname__

    def _parameters(self) -> dict[str, inspect.Parameter]:
        params = dict(inspect.signature(self.fn).parameters)
        if self.scope == "run":
            if not params or next(iter(params)) != "ctx":
                raise ValueError(f"fixture {self.name}: a run-scoped fixture takes the run's context first (ctx)")
            params.pop("ctx")
        return params

    def defaults(self) -> dict[str, Any]:
        return {k: p.default for k, p in self._parameters().items()
                if p.default is not inspect.Parameter.empty and k not in self.uses}

    def bind(self, **params: Any) -> "Request":
        """A request for this fixture at ``params`` (others at their defaults)."""
        return Request(self, params)

    @property
    def request(self) -> "Request":
        return Request(self, {})

    def __call__(self, *args, **kwargs):
        raise TypeError(f"fixture {self.short_name} is injected, not called: name it in a check's uses= (or "
                        f"theorems.fixture.resolve it in a test)")

    def __reduce__(self):  # pickled by reference (Dask ships requests to workers): the module's own object
        return _lookup, (self.fn.__module__, self.fn.__qualname__)

    def __repr__(self) -> str:
        return f"<fixture {self.short_name}>"


def fixture(fn: Callable | None = None, *, scope: Scope = "run", uses: Mapping[str, Any] | None = None):
    """Declare ``fn`` a fixture (``@fixture`` or ``@fixture(scope="static", uses={"suite": example1_suite})``).

    ``uses``: fixtures this one is computed from, injected as its parameters of those names."""
    def wrap(f: Callable) -> Fixture:
        return Fixture(f, scope, dict(uses or {}))

    return wrap(fn) if fn is not None else wrap


def _token(v: Any) -> Any:
    """A value's part of a fixture key, by value (see the module docstring); a :class:`Unkeyable` error for a value
    that could be keyed only by its identity."""
    return _value_token(v, frozenset())


class Unkeyable(TypeError):
    """A parameter value with no value to key by (an arbitrary object, a tensor, a bound method of one)."""


def _type_name(v: Any) -> str:
    return f"{type(v).__module__}.{type(v).__qualname__}"


def _value_token(v: Any, inside: frozenset[int]) -> Any:
    if is_fixture(v):
        return ("request", as_request(v).key())
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return v
    if id(v) in inside:  # a function whose closure holds itself (a recursive helper)
        return ("itself",)
    inside = inside | {id(v)}
    if isinstance(v, tuple) and hasattr(type(v), "_fields"):  # a named tuple: a numerics.optim.Transform is one
        return (_type_name(v), tuple((f, _value_token(getattr(v, f), inside)) for f in v._fields))
    if type(v) in (tuple, list):
        return (type(v).__name__, tuple(_value_token(x, inside) for x in v))
    if type(v) is frozenset:
        return ("frozenset", tuple(sorted((_value_token(x, inside) for x in v), key=repr)))
    if dataclasses.is_dataclass(v) and not isinstance(v, type) and type(v).__dataclass_params__.frozen:
        return (_type_name(v), tuple((f.name, _value_token(getattr(v, f.name), inside))
                                     for f in dataclasses.fields(v)))
    if isinstance(v, types.MethodType):
        return ("method", _value_token(v.__self__, inside), _value_token(v.__func__, inside))
    if isinstance(v, types.FunctionType):
        if v.__closure__ is None and "<" not in v.__qualname__:
            return ("fn", v.__module__, v.__qualname__)
        # a closure or a lambda (what an optim transform is made of): its code and every value it captures
        cells = tuple(_value_token(c.cell_contents, inside) if _cell_filled(c) else ("empty",)
                      for c in v.__closure__ or ())
        return ("closure", v.__module__, v.__qualname__, v.__code__.co_firstlineno, _code_digest(v.__code__),
                _value_token(v.__defaults__, inside), _value_token(tuple(sorted((v.__kwdefaults__ or {}).items())),
                                                                   inside), cells)
    if isinstance(v, type) or (isinstance(v, types.BuiltinFunctionType)
                               and (v.__self__ is None or isinstance(v.__self__, types.ModuleType))):
        return ("fn", v.__module__, v.__qualname__)
    raise Unkeyable(f"a {_type_name(v)} has no value to key by")


def _cell_filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _code_digest(code: types.CodeType) -> str:
    """The code's instructions, the names it reads and its constants (nested code by its own digest)."""
    h = hashlib.sha256(code.co_code)
    h.update(repr(code.co_names).encode())
    for c in code.co_consts:
        h.update((_code_digest(c) if isinstance(c, types.CodeType) else repr(c)).encode())
    return h.hexdigest()[:16]


def is_request_list(v: Any) -> bool:
    """A list (or tuple) of fixture requests: a parameter whose value is the list of their values."""
    return isinstance(v, (list, tuple)) and type(v) in (list, tuple) and bool(v) and all(is_fixture(x) for x in v)


def _describe(v: Any) -> str:
    if isinstance(v, (Request, Fixture)):
        return as_request(v).describe()
    if is_request_list(v):
        inner = ", ".join(as_request(x).describe() for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner})"
    if isinstance(v, PerBudget):
        return f"per_budget({v.quick!r}, {v.standard!r}, {v.full!r})"
    qual = getattr(v, "__qualname__", None)
    if callable(v) and qual:
        return qual
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True, eq=False)
class Request:
    """A fixture at some parameters; a parameter named like one of the fixture's ``uses`` replaces that fixture."""

    fixture: Fixture
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        takes = self.fixture._parameters()
        unknown = sorted(set(self.params) - set(takes))
        if unknown:
            raise ValueError(f"fixture {self.fixture.short_name} takes no parameter(s) {', '.join(unknown)}")
        what = f"fixture {self.fixture.short_name}"
        for name in self.fixture.uses:
            if name in self.params and not (is_fixture(self.params[name]) or is_request_list(self.params[name])):
                raise ValueError(f"{what}: {name} is a fixture it uses; bind a fixture request (or a list of them) "
                                 "there, not a value")
        for name, v in self.params.items():
            if isinstance(v, (list, tuple)) and any(is_fixture(x) for x in v) and not is_request_list(v):
                raise ValueError(f"{what}: {name} mixes fixture requests and values; bind a list of requests or a "
                                 "value")
        for name, v in self.plain_params().items():
            try:
                _token(v)
            except Unkeyable as e:
                raise ValueError(f"{what}: parameter {name} = {_describe(v)} cannot be keyed by value ({e}); give a "
                                 "plain value, a frozen dataclass, a module-level function or an optim transform") \
                    from None
        _refuse_cycle(self, ())

    def bind(self, **params: Any) -> "Request":
        return Request(self.fixture, {**self.params, **params})

    def _injected(self) -> dict[str, Any]:
        """Each parameter injected as fixture values: its ``uses``, with any replaced by ``params``, and any parameter
        bound to a fixture or to a list of them; each a request or a list (tuple) of requests."""
        deps = {k: self.params.get(k, r) for k, r in self.fixture.uses.items()}
        deps |= {k: v for k, v in self.params.items() if is_fixture(v) or is_request_list(v)}
        return {k: _dependency(v) for k, v in deps.items()}

    def dependencies(self) -> dict[str, "Request"]:
        """The fixtures this one is computed from, one entry each: a parameter bound to a fixture under its own name,
        the i-th request of a list under ``name[i]``."""
        out: dict[str, Request] = {}
        for k, d in self._injected().items():
            out |= {k: d} if isinstance(d, Request) else {f"{k}[{i}]": r for i, r in enumerate(d)}
        return out

    def plain_params(self) -> dict[str, Any]:
        """The parameters that are values (defaults filled in), before per-budget values are picked."""
        return {**self.fixture.defaults(),
                **{k: v for k, v in self.params.items()
                   if k not in self.fixture.uses and not is_fixture(v) and not is_request_list(v)}}

    def arguments(self, budget: str) -> dict[str, Any]:
        """The value parameters the function is called with at ``budget``."""
        return {k: (getattr(v, budget) if isinstance(v, PerBudget) else v) for k, v in self.plain_params().items()}

    def key(self, budget: str | None = None) -> tuple:
        """What the value depends on besides the run: the fixture, its value parameters (per-budget ones picked at
        ``budget``; None keeps them unpicked) and, recursively, the fixtures it uses."""
        args = self.plain_params() if budget is None else self.arguments(budget)
        deps = {k: r.key(budget) for k, r in self.dependencies().items()}
        return (self.fixture.name, tuple(sorted((k, _token(v)) for k, v in args.items())),
                tuple(sorted(deps.items())))

    def describe(self) -> str:
        """``trajectory_bank(spread=0.5)``: the fixture and the parameters bound to it (for reports)."""
        inner = ", ".join(f"{k}={_describe(v)}" for k, v in self.params.items())
        return f"{self.fixture.short_name}({inner})"

    def compute(self, ctx, dependencies: Mapping[str, Any]) -> Any:
        """The fixture's value at the run ``ctx`` from its dependencies' values (keyed as :meth:`dependencies`; a list
        of requests is passed as the list, or tuple, of their values in its order)."""
        kw = {k: dependencies[k] if isinstance(d, Request) else
              type(d)(dependencies[f"{k}[{i}]"] for i in range(len(d))) for k, d in self._injected().items()}
        kw |= self.arguments(ctx.budget)
        return self.fixture.fn(fixture_context(ctx), **kw) if self.fixture.scope == "run" else self.fixture.fn(**kw)

    def __repr__(self) -> str:
        return f"<request {self.describe()}>"


def as_request(v: Any) -> Request:
    if isinstance(v, Request):
        return v
    if isinstance(v, Fixture):
        return v.request
    raise TypeError(f"not a fixture: {v!r}")


def is_fixture(v: Any) -> bool:
    return isinstance(v, (Request, Fixture))


def _dependency(v: Any) -> "Request | list[Request] | tuple[Request, ...]":
    """A fixture, or a list (tuple) of them, as requests (the container kept: its values are passed in one)."""
    return type(v)(as_request(x) for x in v) if is_request_list(v) else as_request(v)


def _refuse_cycle(req: Request, path: tuple[str, ...]) -> None:
    """A fixture that needs itself, at any parameters, through the fixtures it uses (requests are built from
    requests that exist, so only a ``bind`` can close such a loop)."""
    name = req.fixture.name
    if name in path:
        chain = " -> ".join(p.rsplit(".", 1)[-1] for p in path + (name,))
        raise ValueError(f"fixture cycle: {chain}")
    for dep in req.dependencies().values():
        _refuse_cycle(dep, path + (name,))


def fixture_context(ctx):
    """The context a fixture sees: the run (seed, budget, device) only, so a check and its controls (figures off, a
    different alpha) share one value."""
    return Context(seed=ctx.seed, budget=ctx.budget, device=ctx.device)


def run_key(request: Request, ctx) -> tuple:
    """The key of ``request``'s value in the run ``ctx``."""
    run = () if request.fixture.scope == "static" else (ctx.seed, ctx.budget, ctx.device)
    return request.key(ctx.budget) + run


def closure(requests: Iterable[Request]) -> list[Request]:
    """``requests`` and every fixture they use, transitively, dependencies first."""
    out: list[Request] = []
    seen: set[int] = set()

    def visit(r: Request) -> None:
        if id(r) in seen:
            return
        seen.add(id(r))
        for d in r.dependencies().values():
            visit(d)
        out.append(r)

    for r in requests:
        visit(r)
    return out


class Parts:
    """A fixture value computed in parts on first use and kept with the value: ``parts[k]`` is ``make(k)``.

    For a set-up whose size its consumers decide as they run (a pilot that draws more batches only when it needs
    them): the consumers that share the value share the parts they have drawn.  ``make(k)`` must depend on the run and
    ``k`` alone (each part on a random stream of its own), so which consumer draws a part first, or a copy of the value
    on another worker drawing it again, changes no result."""

    def __init__(self, make: Callable[[Any], Any]):
        self._make = make
        self._parts: dict = {}

    def __getitem__(self, k):
        if k not in self._parts:
            self._parts[k] = self._make(k)
        return self._parts[k]


class FixtureFailure:
    """A fixture's exception, kept as its value: each consumer raises it (a raised check), and the fixture is not
    computed again.  The same record whether the fixture ran in the consumer's process or in a Dask task."""

    def __init__(self, error: BaseException):
        self.error = error


class Memo:
    """The fixture values of one run, each computed once and dropped after its last expected consumer.

    ``expect(requests)`` announces one consumer of each request (a check or control about to run); a fixture's own
    computation is one consumer of each fixture it uses.  ``values(requests)`` computes what is missing;
    ``release(requests)`` says the consumer is done.  Values that were never announced stay until the memo is dropped
    (the end of the run).  A fixture that raised raises again for each consumer, without being recomputed."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._values: dict[tuple, Any] = {}
        self._waiting: Counter = Counter()
        self._known: set[tuple] = set()
        self.computed: Counter = Counter()  # fixture name -> computations (tests: shared means once)

    def _key(self, r: Request) -> tuple:
        return run_key(r, self.ctx)

    def expect(self, requests: Iterable[Request]) -> None:
        for r in requests:
            k = self._key(r)
            self._waiting[k] += 1
            if k not in self._known:
                self._known.add(k)
                self.expect(r.dependencies().values())

    def value(self, r: Request) -> Any:
        k = self._key(r)
        if k not in self._values:
            deps = r.dependencies()
            try:
                got = {name: self.value(d) for name, d in deps.items()}
                self.computed[r.fixture.name] += 1
                self._values[k] = r.compute(self.ctx, got)
            except Exception as e:  # noqa: BLE001 -- every consumer reports it (a check that raised)
                self._values[k] = FixtureFailure(e)
            finally:
                self.release(deps.values())
        v = self._values[k]
        if isinstance(v, FixtureFailure):
            raise v.error
        return v

    def values(self, requests: Mapping[str, Request]) -> dict[str, Any]:
        return {name: self.value(r) for name, r in requests.items()}

    def release(self, requests: Iterable[Request]) -> None:
        for r in requests:
            k = self._key(r)
            if k in self._known:
                self._waiting[k] -= 1
                if self._waiting[k] <= 0:
                    self._values.pop(k, None)

    def __len__(self) -> int:
        return len(self._values)


def resolve(v: Any, ctx, memo: Memo | None = None) -> Any:
    """A fixture's value at the run ``ctx`` (for tests and notebooks; the runner shares values through its memo)."""
    return (memo or Memo(ctx)).value(as_request(v))


def requests_in(mapping: Mapping[str, Any]) -> dict[str, Request]:
    """The entries of ``mapping`` that are fixtures, as requests."""
    return {k: as_request(v) for k, v in mapping.items() if is_fixture(v)}


def check_uses(fn: Callable, uses: Mapping[str, Any], what: str) -> dict[str, Request]:
    """``uses`` as requests, refusing a name ``fn`` does not take (one line, at import)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {k: as_request(v) for k, v in uses.items()}
    unknown = sorted(set(uses) - set(sig.parameters))
    if unknown:
        raise ValueError(f"{what}: {getattr(fn, '__qualname__', fn)} takes no parameter(s) {', '.join(unknown)} "
                         "(named in uses=)")
    out = {}
    for k, v in uses.items():
        if not is_fixture(v):
            raise ValueError(f"{what}: uses[{k!r}] is not a fixture ({type(v).__name__}); a plain value goes in params=")
        out[k] = as_request(v)
    return out


__all__ = ["Fixture", "Request", "Memo", "FixtureFailure", "Parts", "PerBudget", "Unkeyable", "fixture", "per_budget",
           "resolve", "as_request", "is_fixture", "is_request_list", "closure", "run_key", "requests_in", "check_uses",
           "fixture_context"]
