"""Tests of the Python shipped inside the ROCm packages.

Run from the repository root:
`python3 -m unittest discover -s python/tests -t python`.
"""
