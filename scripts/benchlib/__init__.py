"""Helpers of scripts/bench.py: the native and proxy sides, the scenarios, RSS sampling,
py-spy profiles and the report."""
