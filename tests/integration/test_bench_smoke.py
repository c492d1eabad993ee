"""The benchmark harness itself, at its ``--smoke`` size: every scenario runs to its end on
both sides and reports every metric. No time is asserted (the figures are for people to
read, on a quiet machine); what this catches is a harness that no longer runs — a
scenario failing against the proxy, a metric gone missing — which would otherwise be
found only when someone needs the figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(900)
def test_the_quick_benchmark_runs_every_scenario_on_both_sides(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench.py"), "--smoke", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=840,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(out.read_text())
    assert sorted(res["scenarios"]) == ["1", "2", "3", "4", "5", "6"]
    for num, sc in res["scenarios"].items():
        assert sc["status"] == {"native": "ok", "proxy": "ok"}, (num, sc["failures"])
        assert sc["summary"], num
        for row in sc["summary"]:
            assert isinstance(row["native"], (int, float)), (num, row)
            assert isinstance(row["proxy"], (int, float)), (num, row)
    # The same pgoutput payload, byte for byte in size, from both publishers.
    s4 = res["scenarios"]["4"]["runs"]
    assert s4["proxy"][0]["payload_bytes"] == s4["native"][0]["payload_bytes"]
    # S3's diagnostics of where the proxy's CPU goes are there for both client counts.
    s3 = res["scenarios"]["3"]["runs"]["proxy"][0]
    for clients in (1, 8):
        assert s3[f"proxy_cpu_us_per_tx_{clients}c"] > 0
        assert s3[f"walsender_cpu_us_per_tx_{clients}c"] > 0
    # The table for docs/performance.md: a row per metric under its header.
    lines = res["markdown_table"].splitlines()
    assert lines[0].startswith("| S | metric | native | proxy |")
    assert len(lines) == 2 + sum(len(sc["summary"]) for sc in res["scenarios"].values())
