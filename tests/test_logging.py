"""One logger under one name, one log-once helper (issue #24 item 9)."""

from __future__ import annotations

import ast
import logging
import pathlib

from straggler._log import WarnOnce

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "straggler"


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE.parent), ast.parse(path.read_text())


def test_every_module_logs_on_the_straggler_logger_under_the_name_log():
    found = []
    for path, tree in _modules():
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and ast.unparse(node.value.func) == "logging.getLogger":
                found.append((str(path), ast.unparse(node.targets[0]),
                              ast.unparse(node.value.args[0])))
    assert found, "no module-level logger found: the test is looking in the wrong place"
    assert [f for f in found if f[1:] != ("log", "'straggler'")] == []


def test_no_module_keeps_its_own_warned_set():
    # Log-once goes through straggler._log.WarnOnce only.
    found = [f"{path}:{node.lineno}" for path, tree in _modules() for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr == "_warned"]
    assert found == []


def test_warn_once_logs_each_key_once(caplog):
    warn = WarnOnce()
    with caplog.at_level(logging.WARNING, logger="straggler"):
        assert warn("a", "first %s", 1)
        assert not warn("a", "again %s", 2)
        assert warn("b", "other")
    assert [r.getMessage() for r in caplog.records] == ["first 1", "other"]
    assert {r.name for r in caplog.records} == {"straggler"}
    assert warn.seen("a") and not warn.seen("c")


def test_warn_once_remembers_a_bounded_number_of_keys(caplog):
    warn = WarnOnce(max_keys=2)
    with caplog.at_level(logging.WARNING, logger="straggler"):
        for key in "abcde":
            warn(key, "key %s", key)
    assert [r.getMessage() for r in caplog.records] == [
        "key a", "key b", "straggler: more than 2 distinct warnings; further ones are not logged"]
