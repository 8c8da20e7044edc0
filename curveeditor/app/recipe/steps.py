"""The recipe panel's model: one :class:`StepState` per step (op, every parameter's value, enabled),
the GUI's starting values for required parameters, and the titles and unit suffixes it shows.
No widgets here: :mod:`.form` draws a step's parameters, :mod:`.panel` runs the recipe.
"""

from __future__ import annotations

import copy
from typing import Any

from curveeditor.engine.recipe import OPS, REQUIRED, ParamSpec, RecipeError

__all__ = ["StepState", "GUI_DEFAULTS", "OP_TITLES", "UNIT_SUFFIX", "op_title", "applies"]

#: Starting values for parameters the recipe format requires (no default in the engine).
GUI_DEFAULTS: dict[tuple[str, str], Any] = {
    ("reduce", "max_error"): 0.5,
    ("smooth", "sigma"): 0.05,
    ("smooth", "cutoff"): 6.0,
    ("max_speed", "speed"): 720.0,
    ("to_kind", "kind"): "quaternion",
}

OP_TITLES = {
    "unwrap": "Unwrap (Euler filter)",
    "unflip": "Unflip (hemisphere / unwrap)",
    "resample": "Resample",
    "reduce": "Reduce keys",
    "smooth": "Smooth",
    "despike": "Despike",
    "max_speed": "Max speed",
    "limit": "Limit yaw / pitch",
    "to_order": "Convert rotation order",
    "to_kind": "Convert Euler / quaternion",
}

UNIT_SUFFIX = {"deg": " \u00b0", "deg/s": " \u00b0/s", "s": " s", "Hz": " Hz", "mm": " mm"}


def op_title(op: str) -> str:
    """The menu / list title of an op ("Reduce keys" for ``reduce``)."""
    return OP_TITLES.get(op, op)


def _default(op: str, p: ParamSpec) -> Any:
    if p.default is REQUIRED:
        if (op, p.name) in GUI_DEFAULTS:
            return GUI_DEFAULTS[(op, p.name)]
        if p.kind == "choice":
            return p.choices[0]
        return p.minimum if p.minimum is not None else 0.0
    return list(p.default) if isinstance(p.default, tuple) else p.default


def applies(p: ParamSpec, params: dict[str, Any]) -> bool:
    """Whether ``p`` applies with these parameter values (``ParamSpec.when``)."""
    return p.when is None or params.get(p.when[0]) == p.when[1]


class StepState:
    """One step as edited in the panel: op, every parameter's value (also inactive ones, so
    switching a method back keeps what was typed), and whether it is enabled."""

    def __init__(self, op: str, params: dict[str, Any] | None = None, enabled: bool = True):
        if op not in OPS:
            raise RecipeError(f"unknown op {op!r}; ops: {', '.join(OPS)}")
        self.op = op
        self.enabled = enabled
        self.params: dict[str, Any] = {p.name: _default(op, p) for p in OPS[op].params}
        for k, v in (params or {}).items():
            self.params[k] = list(v) if isinstance(v, tuple) else v

    def step_dict(self) -> dict[str, Any]:
        """The JSON object of this step (only the parameters that apply)."""
        out: dict[str, Any] = {"op": self.op}
        for p in OPS[self.op].params:
            if applies(p, self.params):
                out[p.name] = copy.copy(self.params[p.name])
        return out

    def summary(self) -> str:
        parts = []
        for p in OPS[self.op].params:
            if not applies(p, self.params):
                continue
            v = self.params[p.name]
            unit = UNIT_SUFFIX.get(p.unit, f" {p.unit}" if p.unit else "").strip()
            if v is None:
                parts.append(f"{p.name} auto")
            elif isinstance(v, bool):
                parts.append(f"{p.name} {'on' if v else 'off'}")
            elif isinstance(v, (list, tuple)):
                parts.append(f"{p.name} {v[0]:g}..{v[1]:g}{unit}")
            elif isinstance(v, float):
                parts.append(f"{p.name} {v:g}{unit}")
            else:
                parts.append(f"{p.name} {v}")
        return ", ".join(parts)
