"""The test suite as a regular package, so ``from tests.... import`` finds these files first.

pufbx 0.1.0 (the ``fbx`` extra) installs its own top-level ``tests`` package into site-packages; a
regular package there would win over this folder as a namespace package.
"""
