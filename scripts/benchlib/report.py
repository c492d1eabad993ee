"""Scenario definitions for the report: metrics, targets, medians, ratios, the table."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import scenarios as sc


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    better: str  # "lower" | "higher"
    #: ("ratio_max", x): proxy/native ≤ x; ("ratio_min", x): ≥ x; ("abs_max", x): proxy < x.
    target: tuple[str, float] | None = None

    def target_text(self) -> str:
        if self.target is None:
            return ""
        kind, x = self.target
        return {"ratio_max": f"≤ {x:g}x", "ratio_min": f"≥ {x:g}x", "abs_max": f"< {x:g} {self.unit}"}[kind]

    def met(self, native: float | None, proxy: float | None) -> bool | None:
        if self.target is None or proxy is None:
            return None
        kind, x = self.target
        if kind == "abs_max":
            return proxy < x
        if not native:
            return None
        r = proxy / native
        return r <= x if kind == "ratio_max" else r >= x


@dataclass
class Scenario:
    id: int
    title: str
    parts: list[tuple[str, Callable[..., dict[str, Any]]]]
    metrics: list[Metric]
    sizes: Callable[[sc.Sizes], str]
    profiled: bool = False
    notes: list[str] = field(default_factory=list)


SCENARIOS: dict[int, Scenario] = {
    1: Scenario(1, "initial sync", [("", sc.s1_initial_sync)],
                [Metric("sync_s", "CREATE SUBSCRIPTION → table ready", "s", "lower", ("ratio_max", 0.8)),
                 Metric("copy_from_floor_s", "the subscriber's COPY FROM alone, same rows (info)", "s", "lower"),
                 Metric("floor_of_sync", "… as a share of this side's sync time (info)", "share", "higher"),
                 Metric("publisher_cpu_s", "publisher CPU during the sync, all processes (info)", "s", "lower"),
                 Metric("subscriber_cpu_s", "subscriber CPU during the sync, all processes (info)", "s", "lower")],
                lambda z: f"{z.s1_rows:,} rows", profiled=True),
    2: Scenario(2, "one big transaction", [("", sc.s2_big_transaction)],
                [Metric("commit_to_apply_s", "COMMIT → all rows applied", "s", "lower", ("ratio_max", 1.0)),
                 Metric("insert_s", "INSERT … SELECT on the publisher (info)", "s", "lower")],
                lambda z: f"{z.s2_rows:,} rows in 1 transaction", profiled=True),
    3: Scenario(3, "single-row transactions", [("", sc.s3_single_row_txns)],
                [Metric("tps_1c", "rate, 1 client", "tps", "higher", ("ratio_min", 0.5)),
                 Metric("lag_1c_s", "lag after the last commit, 1 client", "s", "lower", ("ratio_max", 1.0)),
                 Metric("tps_8c", "rate, 8 clients", "tps", "higher", ("ratio_min", 0.5)),
                 Metric("lag_8c_s", "lag after the last commit, 8 clients", "s", "lower", ("ratio_max", 1.0))],
                lambda z: f"{z.s3_txns:,} transactions (at most {z.s3_max_seconds:g} s) per client count",
                profiled=True),
    4: Scenario(4, "decode + send to pg_recvlogical", [("", sc.s4_decode_send)],
                [Metric("stream_s", "stream to the commit's end LSN", "s", "lower", ("ratio_max", 1.0)),
                 Metric("rows_per_s", "rows/s", "rows/s", "higher", ("ratio_min", 1.0)),
                 Metric("mb_per_s", "pgoutput MB/s", "MB/s", "higher", ("ratio_min", 1.0))],
                lambda z: f"{z.s4_rows:,} rows in 1 transaction", profiled=True),
    5: Scenario(5, "commit → apply latency", [("", sc.s5_latency)],
                [Metric("p50_ms", "p50", "ms", "lower"),
                 Metric("p99_ms", "p99", "ms", "lower", ("ratio_max", 2.0)),
                 Metric("commit_p50_ms", "COMMIT alone, p50 (info)", "ms", "lower")],
                lambda z: f"{z.s5_commits} single-row commits"),
    6: Scenario(6, "peak memory, huge transaction", [("_off", sc.s6_memory("off")), ("_on", sc.s6_memory("on"))],
                [Metric("peak_rss_mb_off", "peak RSS, streaming=off", "MB", "lower", ("abs_max", 500)),
                 Metric("peak_rss_mb_on", "peak RSS, streaming=on", "MB", "lower", ("abs_max", 500)),
                 Metric("peak_rss_stream_phase_mb_off", "… after COMMIT only, streaming=off", "MB", "lower"),
                 Metric("peak_pss_mb_off", "peak PSS (shared pages split), streaming=off", "MB", "lower"),
                 Metric("peak_pss_mb_on", "peak PSS (shared pages split), streaming=on", "MB", "lower"),
                 Metric("peak_union_mb_off", "peak resident set, each page once, streaming=off", "MB", "lower"),
                 Metric("peak_union_mb_on", "peak resident set, each page once, streaming=on", "MB", "lower"),
                 Metric("commit_to_apply_s_off", "COMMIT → applied, streaming=off (info)", "s", "lower"),
                 Metric("commit_to_apply_s_on", "COMMIT → applied, streaming=on (info)", "s", "lower")],
                lambda z: f"{z.s6_rows:,} rows in 1 transaction",
                notes=["RSS: proxy = the sum over the proxy process and its walsender processes "
                       "(the template and the streaming one; a page they share is counted in each); "
                       "native = the walsender serving the subscription (VmRSS, includes the "
                       "shared_buffers pages it touched)",
                       "resident set, each page once: the physical pages any of the proxy's "
                       "processes maps, counted once (/proc/PID/pagemap; root only); PSS splits a "
                       "shared page among all its sharers, the benchmark's own included",
                       "file-backed pages (the shared libraries) depend on the page cache: right "
                       "after `pip install` wrote them they map in large folios, ~30-40 MB more "
                       "per process than after they were read back from disk"]),
}


def part_metrics(suffix: str, m: dict[str, Any]) -> dict[str, Any]:
    """S6 parts name their metrics with the part's suffix (peak_rss_mb → peak_rss_mb_off)."""
    if not suffix:
        return m
    return {f"{k}{suffix}": v for k, v in m.items()}


def median_of(runs: list[dict[str, Any]], key: str) -> float | None:
    vals = [r[key] for r in runs if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
    return statistics.median(vals) if vals else None


def fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "—"
    if unit in ("tps", "rows/s"):
        return f"{v:,.0f}"
    if unit == "MB":
        return f"{v:,.0f}"
    if unit == "ms":
        return f"{v:.2f}" if v < 10 else f"{v:.1f}"
    return f"{v:.3f}" if v < 10 else f"{v:.2f}"


def fmt_ratio(r: float | None) -> str:
    if r is None:
        return "—"
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.3f}x"


def summarise(scn: Scenario, result: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for m in scn.metrics:
        nat = median_of(result["runs"].get("native", []), m.key)
        prx = median_of(result["runs"].get("proxy", []), m.key)
        ratio = prx / nat if nat and prx is not None else None
        rows.append({"scenario": scn.id, "metric": m.key, "label": m.label, "unit": m.unit,
                     "native": nat, "proxy": prx, "ratio": ratio, "target": m.target_text(),
                     "met": m.met(nat, prx)})
    return rows


def render_table(all_rows: list[dict[str, Any]], status: dict[int, dict[str, str]]) -> str:
    head = ["S", "metric", "unit", "native", "proxy", "proxy/native", "target", "met"]
    body = []
    for r in all_rows:
        met = {True: "yes", False: "NO", None: ""}[r["met"]]
        body.append([str(r["scenario"]), r["label"], r["unit"], fmt(r["native"], r["unit"]),
                     fmt(r["proxy"], r["unit"]), fmt_ratio(r["ratio"]),
                     r["target"], met])
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in body]
    bad = [f"S{k} {side}: {st}" for k, v in status.items() for side, st in v.items() if st != "ok"]
    if bad:
        lines += ["", "not ok:", *(f"  {b}" for b in bad)]
    return "\n".join(lines)


def markdown_table(all_rows: list[dict[str, Any]]) -> str:
    lines = ["| S | metric | native | proxy | proxy/native | target | met |", "|---|---|---:|---:|---:|---|---|"]
    for r in all_rows:
        u = r["unit"]
        met = {True: "yes", False: "**no**", None: ""}[r["met"]]
        ratio = fmt_ratio(r["ratio"])
        lines.append(f"| {r['scenario']} | {r['label']} ({u}) | {fmt(r['native'], u)} | {fmt(r['proxy'], u)} | "
                     f"{ratio} | {r['target']} | {met} |")
    return "\n".join(lines)
