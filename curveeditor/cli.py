"""curveeditor-cli: the headless face of the engine (being built; see docs/architecture.md)."""


def main(argv=None) -> int:
    raise SystemExit("curveeditor-cli is not built yet")
