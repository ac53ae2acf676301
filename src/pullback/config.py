"""Runtime switches, set with ``pullback.config.update(name, value)`` as in JAX."""
from __future__ import annotations

from typing import Any


class Config:
    """The switches: ``backend`` ("cpu", or "reference" to run every primitive's NumPy
    reference instead of its kernel; the test oracle); ``jit_flush_denormals`` (True: programs
    compiled by ``jit`` treat subnormal floats as zero, as XLA does on CPU -- arithmetic on
    them is 10-100x slower, which a vanishing gradient hits in every step of a long scan;
    False keeps IEEE subnormals, as eager execution always does). Read when a program is
    compiled."""

    _options = {"backend": ("cpu", ("cpu", "reference")),
                "jit_flush_denormals": (True, (True, False))}

    def __init__(self) -> None:
        for name, (default, _) in self._options.items():
            object.__setattr__(self, name, default)

    def update(self, name: str, value: Any) -> None:
        if name not in self._options:
            raise AttributeError(f"config: unknown option {name!r}; options: "
                                 f"{', '.join(self._options)}")
        allowed = self._options[name][1]
        if value not in allowed:
            raise ValueError(f"config: option {name!r} takes one of {allowed}, got {value!r}")
        object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        self.update(name, value)


config = Config()
