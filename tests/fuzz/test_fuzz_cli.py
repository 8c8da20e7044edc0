"""The CI part of the fuzz suite (issue 11): the CLI and the editor's load step keep the contract on
mutated ``.anim``, BVH and CSV files, on special files, and on the issue's reproducers.

Contract (``tests/fuzz/runner.py``): exit 0 with outputs that read back with ``read_clip`` to the
same tracks, or exit 2 with one stderr line naming the file; no traceback, no hang past the time
bound, no memory blow-up, input untouched, nothing half-written.

Budget: every case runs in a forked child (a few ms of overhead); hypothesis is derandomized with a
fixed ``max_examples`` and no shrinking (a failing case is printed and saved in full, and
``python -m tests.fuzz --case N`` shrinks causes in the long run). Nothing is skipped: every mutation
and every command is run at least once by ``test_every_mutation_runs`` whatever hypothesis draws.
"""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz import mutations as mu
from tests.fuzz.cases import COMMANDS, SPECIALS, Case, mutate
from tests.fuzz.reproducers import reproducer_cases
from tests.fuzz.runner import preload, run_case
from tests.fuzz.seeds import SEEDERS

#: Seconds per case in CI: generous for a loaded 2-core machine (a healthy case takes < 1 s).
CI_TIMEOUT_S = 20.0
#: Cases per format for the hypothesis tests.
EXAMPLES = 40

FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
    print_blob=False,
)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    mu.set_scale("ci")
    preload()
    return str(tmp_path_factory.mktemp("fuzz"))


def check(case: Case, work: str) -> None:
    outcome = run_case(case, root=work, timeout_s=CI_TIMEOUT_S)
    if outcome.failed:
        saved = os.path.join(work, f"failed{case.ext}")
        with open(saved, "wb") as f:
            f.write(case.data)
        pytest.fail(
            f"{outcome.cls}: {case.describe()}\n{outcome.detail}\ninput saved as {saved}\n"
            f"stderr (end):\n{outcome.stderr[-1500:]}",
            pytrace=False,
        )


def _case(ext: str, rng: random.Random, command: str) -> Case:
    data = SEEDERS[ext](rng)
    n = rng.choice((0, 1, 1, 1, 2, 3))
    data, names, invalid = mutate(ext, data, rng, n)
    return Case(ext, data, command, names, invalid)


_commands = st.sampled_from(sorted(COMMANDS))
_rngs = st.randoms(use_true_random=False, note_method_calls=False)


@FUZZ
@given(rng=_rngs, command=_commands)
def test_mutated_anim_files_keep_the_contract(work, rng, command):
    check(_case(".anim", rng, command), work)


@FUZZ
@given(rng=_rngs, command=_commands)
def test_mutated_bvh_files_keep_the_contract(work, rng, command):
    check(_case(".bvh", rng, command), work)


@FUZZ
@given(rng=_rngs, command=_commands)
def test_mutated_csv_files_keep_the_contract(work, rng, command):
    check(_case(".csv", rng, command), work)


def _every_mutation():
    commands = sorted(COMMANDS)
    items = [(ext, name) for ext, table in sorted(mu.STRUCTURE_MUTATIONS.items()) for name in sorted(table)]
    items += [(ext, name) for ext in sorted(SEEDERS) for name in sorted(mu.BYTE_MUTATIONS)]
    return [
        pytest.param(
            ext, name, commands[k % len(commands)], id=f"{ext[1:]}-{name}-{commands[k % len(commands)]}"
        )
        for k, (ext, name) in enumerate(items)
    ]


@pytest.mark.parametrize("ext,name,command", _every_mutation())
def test_every_mutation_runs(work, ext, name, command):
    """Each mutation acts on some seed (else it would be silently useless) and keeps the contract."""
    fn = mu.mutation(name)
    for k in range(40):
        rng = random.Random(f"{name}:{k}")
        seed = SEEDERS[ext](rng)
        data, invalid = fn(seed, rng)
        if data != seed:
            break
    else:
        pytest.fail(f"{name} never changed a {ext} seed in 40 tries")
    check(Case(ext, data, command, (name,), invalid), work)


@pytest.mark.parametrize("special", SPECIALS)
@pytest.mark.parametrize("command", ["inspect", "convert_anim", "load"])
def test_special_files_are_refused_in_one_line(work, special, command):
    """A FIFO without a writer, /dev/zero or /dev/urandom behind a clip name, a folder: exit 2 with
    one line, quickly (not a hang, not reading until memory runs out)."""
    case = Case(".anim", b"", command, special=special)
    outcome = run_case(case, root=work, timeout_s=CI_TIMEOUT_S)
    assert outcome.cls == "error", f"{outcome.cls}: {case.describe()}: {outcome.detail}"


@pytest.mark.parametrize("name,case", reproducer_cases(), ids=[n for n, _ in reproducer_cases()])
def test_issue_reproducers_keep_the_contract(work, name, case):
    check(case, work)


def test_contract_checker_catches_each_class(work, monkeypatch):
    """The runner is not a rubber stamp: a traceback, stray stderr lines, an accepted invalid input and
    an output that does not read back are each classified as such."""

    good = Case(".csv", b"path,time,x,y,z\nHips,0,1,2,3\nHips,0.1,4,5,6\n", "inspect")
    assert run_case(good, root=work).cls == "ok"
    assert run_case(Case(".csv", b"time,x\n", "inspect"), root=work).cls == "error"
    marked = Case(good.ext, good.data, "inspect", ("test",), invalid="marked invalid")
    assert run_case(marked, root=work).cls == "accepted_invalid"

    import curveeditor.engine.analysis as analysis

    def boom(*a, **k):
        raise ValueError("boom")

    def stray(*a, **k):
        import sys

        print("/x/engine/y.py:1: RuntimeWarning: overflow", file=sys.stderr)  # a raw warning's shape
        return []

    monkeypatch.setattr(analysis, "inspect_clip", boom)
    out = run_case(good, root=work)
    assert (out.cls, out.exc) == ("traceback", "ValueError")
    monkeypatch.setattr(analysis, "inspect_clip", stray)
    assert run_case(good, root=work).cls == "multiline"

    # The read-back comparison itself (the CLI now refuses such writes before the rename, so it is
    # checked directly): a renamed track and a pose 10 deg off are caught, the same clip passes.
    import dataclasses

    import numpy as np

    from curveeditor.io import read_clip
    from tests.fuzz.runner import compare_tracks

    path = os.path.join(work, "good.csv")
    with open(path, "wb") as f:
        f.write(good.data)
    clip = read_clip(path)
    track = clip.tracks[0]
    assert compare_tracks(clip, clip, ".csv", np) is None
    renamed = dataclasses.replace(clip, tracks=(dataclasses.replace(track, path="Hip"),))
    assert "read back tracks" in compare_tracks(clip, renamed, ".csv", np)
    curve = track.curve.with_keys(value=track.curve.value + [10.0, 0.0, 0.0])
    moved = clip.with_track(dataclasses.replace(track, curve=curve))
    assert "pose differs by 10" in compare_tracks(clip, moved, ".csv", np)
    slow = Case(".csv", good.data, "inspect", special="fifo")
    assert run_case(slow, root=work, timeout_s=1.0).cls in ("hang", "error")
