"""HELMBench: a declarative benchmark compiler for the mental-health safety of language models.

The package is split by pipeline stage (spec → lint → manifest → store → run → score →
publish → cli; see ARCHITECTURE.md); each stage imports only the stages before it.

The public Python API (`helmbench.api`) is re-exported here:

    import helmbench
    diagnostics = helmbench.lint("benchmark")
    manifest = helmbench.compile("benchmark")
    result = helmbench.run(manifest, dry_run=True)
    board = helmbench.report("build/results.db")
    helmbench.publish("build/results.db", "build/site")

Why everything is loaded lazily (module `__getattr__`): `import helmbench` must stay as cheap
as `helmbench lint` needs it to be, never pulling in litellm, mkdocs or the statistics.

Why `helmbench.lint`, `helmbench.run` and `helmbench.publish` are callable modules: they are
also the names of stage packages, and Python's import system sets the package attribute to the
subpackage whenever `helmbench.lint.…` is imported, which would replace a plain function. So
those three subpackages are made callable (calling one calls the API function of that name):
`helmbench.lint(root)` works whichever was imported first, and `helmbench.lint.lint_tree`
still is the stage.
"""

from __future__ import annotations

import importlib
import types

__version__ = "0.1.0"

#: API name → (module, attribute), imported on first use.
_LAZY = {
    "lint": ("helmbench.api", "lint"),
    "compile": ("helmbench.api", "compile"),
    "run": ("helmbench.api", "run"),
    "report": ("helmbench.api", "report"),
    "publish": ("helmbench.api", "publish"),
    "export": ("helmbench.api", "export"),
    "merge": ("helmbench.api", "merge"),
    "import_transcripts": ("helmbench.api", "import_transcripts"),
    "agreement": ("helmbench.api", "agreement"),
    "costs": ("helmbench.api", "costs"),
    "CalibrationReport": ("helmbench.score.calibration", "CalibrationReport"),
    "Progress": ("helmbench.api", "Progress"),
    "Diagnostic": ("helmbench.diagnostics", "Diagnostic"),
    "Manifest": ("helmbench.manifest.reader", "Manifest"),
    "RunReport": ("helmbench.run.session", "RunReport"),
    "Leaderboard": ("helmbench.score.leaderboard", "Leaderboard"),
    "HelmbenchError": ("helmbench.errors", "HelmbenchError"),
    "UsageError": ("helmbench.errors", "UsageError"),
    "StorageError": ("helmbench.errors", "StorageError"),
    "LintFailed": ("helmbench.manifest.emit", "LintFailed"),
}

#: API functions that share their name with a stage subpackage.
_CALLABLE_STAGES = ("lint", "run", "publish")

__all__ = ["__version__", *_LAZY]


class _CallableStage(types.ModuleType):
    """A stage subpackage that, called, runs the API function of its name."""

    def _api(self):
        return getattr(importlib.import_module("helmbench.api"), self.__name__.rpartition(".")[2])

    def __call__(self, *args, **kwargs):
        return self._api()(*args, **kwargs)

    @property
    def __signature__(self):  # what `inspect.signature` and editors show: the API function's
        import inspect

        return inspect.signature(self._api())


class _Package(types.ModuleType):
    """This package: makes a stage subpackage callable as the import system attaches it."""

    def __setattr__(self, name, value):
        if name in _CALLABLE_STAGES and type(value) is types.ModuleType:
            value.__class__ = _CallableStage
        super().__setattr__(name, value)


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'helmbench' has no attribute {name!r}")
    if name in _CALLABLE_STAGES:
        return importlib.import_module(f"helmbench.{name}")  # attached (callable) by _Package.__setattr__
    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_LAZY])


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _Package
