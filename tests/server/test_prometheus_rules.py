"""deploy/prometheus/: the alerting rules pass ``promtool check rules`` and their unit tests
(``promtool test rules``: each alert on made-up series, firing where it must and only
there, its text exact), the example configuration passes ``promtool check config``, and
every metric the rules name is one the server exports (a rule on a renamed metric would
never fire)."""

from __future__ import annotations

import re
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
