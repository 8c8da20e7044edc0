"""A fuzz case: a file (seed + mutations, or a special file such as a FIFO) and one command.

Commands are the issue's (``inspect``, ``inspect --json``, ``convert`` to ``.anim`` and ``.csv``,
``clean --unwrap --reduce 0.5``, ``clean --resample 60 --method squad``, ``sample``), ``clean
--unwrap`` to ``.bvh`` (the BVH writer), plus ``load``: what the editor computes when it opens a
file (read, problems, graph samples, the save's export checks), run headless.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from . import mutations as mu
from .seeds import SEEDERS

#: command name -> (argv template with {IN} and {OUT}, output extension or None)
COMMANDS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "inspect": (("inspect", "{IN}"), None),
    "inspect_json": (("inspect", "--json", "{IN}"), None),
    "convert_anim": (("convert", "{IN}", "{OUT}"), ".anim"),
    "convert_csv": (("convert", "{IN}", "{OUT}"), ".csv"),
    "clean_reduce_anim": (("clean", "{IN}", "--unwrap", "--reduce", "0.5", "-o", "{OUT}"), ".anim"),
    "clean_reduce_csv": (("clean", "{IN}", "--unwrap", "--reduce", "0.5", "-o", "{OUT}"), ".csv"),
    "clean_squad": (("clean", "{IN}", "--resample", "60", "--method", "squad", "-o", "{OUT}"), ".anim"),
    "sample": (("sample", "{IN}", "--rate", "30", "-o", "{OUT}"), ".csv"),
    "clean_unwrap_bvh": (("clean", "{IN}", "--unwrap", "-o", "{OUT}"), ".bvh"),
    "load": ((), None),
}
#: Special input files (not bytes): a FIFO nobody writes to, /dev/zero and /dev/urandom behind a
#: clip name, a folder with a clip name.
SPECIALS = ("fifo", "dev_zero", "dev_urandom", "folder")


@dataclass
class Case:
    """One fuzz case. ``invalid`` is the reason the input must be refused, when known."""

    ext: str
    data: bytes
    command: str
    mutations: tuple[str, ...] = ()
    invalid: str | None = None
    special: str | None = None
    note: dict = field(default_factory=dict)

    @property
    def out_ext(self) -> str | None:
        return COMMANDS[self.command][1]

    def argv(self, inp: str, out: str | None) -> list[str]:
        return [a.replace("{IN}", inp).replace("{OUT}", out or "") for a in COMMANDS[self.command][0]]

    def describe(self) -> str:
        what = self.special or ("+".join(self.mutations) or "seed")
        return f"{self.ext} {what} | {self.command}" + (f" | invalid: {self.invalid}" if self.invalid else "")


def mutate(ext: str, data: bytes, rng: random.Random, n: int, structure_p: float = 0.6):
    """Apply ``n`` mutations; returns (data, names, invalid reason if exactly one marking mutation)."""
    names, invalid = [], None
    table = mu.STRUCTURE_MUTATIONS[ext]
    for _ in range(n):
        pool = table if rng.random() < structure_p else mu.BYTE_MUTATIONS
        name = rng.choice(sorted(pool))
        data, bad = pool[name](data, rng)
        names.append(name)
        invalid = bad if n == 1 else None
    return data, tuple(names), invalid


def make_case(rng: random.Random, commands=None, exts=None, special_p: float = 0.0) -> Case:
    """A random case: format, seed, 0-3 mutations, command. ``special_p``: chance of a special file."""
    command = rng.choice(sorted(commands or COMMANDS))
    if rng.random() < special_p:
        return Case(".anim", b"", command, special=rng.choice(SPECIALS))
    ext = rng.choice(sorted(exts or SEEDERS))
    data = SEEDERS[ext](rng)
    n = rng.choice((0, 1, 1, 1, 1, 2, 2, 3))
    data, names, invalid = mutate(ext, data, rng, n)
    return Case(ext, data, command, names, invalid)
