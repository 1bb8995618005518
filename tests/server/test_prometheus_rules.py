"""deploy/prometheus/: the alerting rules pass ``promtool check rules`` and their unit tests
(``promtool test rules``: each alert on made-up series, firing where it must and only
there, its text exact), the example configuration passes ``promtool check config``, and
every metric the rules name is one the server exports (a rule on a renamed metric would
never fire), the counters the rules' increase() reads exist at 0 before their first event,
and the unit tests tell a rule moved off its threshold from the rule itself."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from helpers.prometheus import DEPLOY, tool
from server import metrics

PROMTOOL = tool("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (./dev test unpacks "
                                                             "Debian's prometheus package)")


def promtool(*args: str) -> subprocess.CompletedProcess:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], cwd=DEPLOY, capture_output=True, text=True, timeout=120)


@needs_promtool
def test_the_rules_and_the_configuration_check():
    rules = promtool("check", "rules", "alerts.yml")
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert "SUCCESS: 12 rules found" in rules.stdout
    config = promtool("check", "config", "prometheus.yml")
    assert config.returncode == 0, config.stdout + config.stderr


@needs_promtool
def test_each_alert_fires_where_it_must_and_only_there():
    tested = promtool("test", "rules", "alerts.test.yml")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout
    # Every alert of the file has a case.
    names = {r["alert"] for g in yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"] for r in g["rules"]}
    cases = yaml.safe_load((DEPLOY / "alerts.test.yml").read_text())["tests"]
    assert names == {t["alertname"] for case in cases for t in case.get("alert_rule_test", [])}


def exported() -> set[str]:
    """The names of every series the server's /metrics can carry: its counters' and
    histograms' samples, the live gauges and the multiprocess ones; Prometheus's ``up``."""
    from prometheus_client import REGISTRY

    names = {"up", "casino_process_info"}
    for family in REGISTRY.collect():
        names |= {s.name for s in family.samples}
        if family.type == "histogram":
            names |= {f"{family.name}_bucket", f"{family.name}_count", f"{family.name}_sum"}
        if family.type == "counter":
            names.add(f"{family.name}_total")
    names |= {name for name, _, _ in metrics.LIVE}
    return names


def test_every_metric_the_rules_name_is_exported():
    rules = [r["expr"] for g in yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"] for r in g["rules"]]
    unquoted = [re.sub(r'"[^"]*"', '""', expr) for expr in rules]  # (job="casino" names no metric)
    named = {m for expr in unquoted for m in re.findall(r"\b((?:casino_|up\b)\w*)", expr)}
    assert named - exported() == set()
    assert {"casino_lease_age_seconds", "casino_event_loop_lag_seconds_bucket", "up"} <= named


def test_the_counters_an_alert_counts_exist_at_0_from_the_start():
    """increase() cannot see the first event of a series that begins at 1: the server's
    counters the rules read are there at 0 before anything happens."""
    from prometheus_client import REGISTRY

    samples = {(s.name, tuple(sorted(s.labels.items()))) for f in REGISTRY.collect() for s in f.samples}
    for name, labels in [("casino_refusals_total", (("code", "internal_error"),)),
                         ("casino_ws_closes_total", (("code", "4008"),)),
                         ("casino_broker_frames_dropped_total", ())]:
        assert (name, labels) in samples


# Each rule moved a little off its threshold, its window or its matching: the unit tests
# must fail on every one (they hold values on both sides of each threshold).
MUTATIONS = [
    ("casino_heartbeat_timestamp_seconds > 5", "casino_heartbeat_timestamp_seconds > 6"),
    ("casino_heartbeat_timestamp_seconds > 5", "casino_heartbeat_timestamp_seconds > 4"),
    ("casino_lease_seconds * 2 / 3", "casino_lease_seconds * 0.7"),
    ("> 512", "> 513"), ("> 512", "> 511"), ("> 300", "> 301"), ("> 300", "> 299"),
    ("\n          > 0.5", "\n          > 0.53"), ("\n          > 0.5", "\n          > 0.49"),
    ("casino_db_pool_idle == 0 and ", ""), ('up{job="casino"} == 0', "up == 0"),
    ('code="internal_error"}[5m]', 'code="internal_error"}[2m]'),
    ("casino_broker_frames_dropped_total[5m]", "casino_broker_frames_dropped_total[2m]"),
    ('[5m]) * 60 > 1', '[5m]) * 60 > 1.3'), ('[5m]) * 60 > 1', '[5m]) * 60 >= 1'),
    ("min_over_time(casino_fanout_waiting_frames[1m]) > 0\n        for: 1m",
     "min_over_time(casino_fanout_waiting_frames[1m]) > 0"),
    ("ignoring(le) ", "ignoring(le) 0 * "),
]


@needs_promtool
@pytest.mark.parametrize(("old", "new"), MUTATIONS)
def test_the_unit_tests_catch_a_rule_moved_off_its_threshold(old, new, tmp_path):
    rules = (DEPLOY / "alerts.yml").read_text()
    assert old in rules
    (tmp_path / "alerts.yml").write_text(rules.replace(old, new, 1))
    shutil.copy(DEPLOY / "alerts.test.yml", tmp_path)
    assert PROMTOOL is not None
    moved = subprocess.run([PROMTOOL, "test", "rules", "alerts.test.yml"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
    assert moved.returncode != 0, f"the unit tests pass with {old!r} made {new!r}"


def test_the_queue_alert_is_the_batch_size():
    """A table's queue is alerted on past one batch's most commands: the runtime's, not a
    number of the rules' own (a change of the batch size would leave the alert behind)."""
    from server.runtime import BATCH

    assert f"casino_table_queue_commands_max > {BATCH}" in (DEPLOY / "alerts.yml").read_text()
