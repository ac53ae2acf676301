"""Public modules list only their API: ``dir(module)`` (tab completion) and
``from module import *`` leave out the helpers a module imports for itself (``np``, ``Any``,
``annotations``, another module's functions) -- JAX's modules export no such names.

``hide_helpers(module, keep)`` installs a ``__dir__`` and an ``__all__`` computed when asked
(functions added to the module later appear): a name is public unless it starts with "_", is
a module, or is a function or class defined outside the module's own package (``keep`` names
the deliberate re-exports). Attribute access is unchanged.
"""
from __future__ import annotations

import types
from typing import Any, Iterable


def _own(obj: Any, home: str) -> bool:
    mod = getattr(obj, "__module__", None)
    if not isinstance(mod, str):
        return True  # a constant (jnp.pi, a dtype): data the module defines
    return mod == home or mod.startswith(home + ".")


def public_names(module: types.ModuleType, keep: Iterable[str] = ()) -> list[str]:
    """The names ``module`` exports: see the module docstring."""
    home, keep = module.__name__, set(keep)
    out = []
    for name, obj in list(vars(module).items()):
        if name in keep:  # (only names the module has: keep may list names yet to come)
            out.append(name)
            continue
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        if type(obj).__module__ in ("typing", "__future__", "typing_extensions") or \
                getattr(obj, "__module__", None) in ("typing", "__future__"):
            continue  # Any, NamedTuple, ``annotations``
        if isinstance(obj, (types.FunctionType, type)) and not _own(obj, home):
            continue  # another module's function or class, imported for use here
        out.append(name)
    return sorted(out)


class _LazyAll:
    """``__all__`` as a sequence computed on use (star imports iterate it)."""

    def __init__(self, module: types.ModuleType, keep: tuple) -> None:
        self._module, self._keep = module, keep

    def __iter__(self):
        return iter(public_names(self._module, self._keep))

    def __len__(self) -> int:
        return len(public_names(self._module, self._keep))

    def __getitem__(self, i: int) -> str:
        return public_names(self._module, self._keep)[i]

    def __contains__(self, name: object) -> bool:
        return name in public_names(self._module, self._keep)


def hide_helpers(module: types.ModuleType, keep: Iterable[str] = ()) -> None:
    """Install the filtered ``__dir__`` and ``__all__`` on ``module`` (see above)."""
    keep = tuple(keep)
    module.__dir__ = lambda: public_names(module, keep)
    if "__all__" not in vars(module):
        module.__all__ = _LazyAll(module, keep)
