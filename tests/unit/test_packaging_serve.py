"""``dpviz app`` (dpviz.serve, issue 37): the command line it runs and the environment it sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpviz import cli, serve

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("value", "on"), [("1", True), ("true", True), (" Yes ", True), ("on", True),
                                           ("0", False), ("", False), ("no", False), ("off", False)])
def test_classroom_env_values(value, on):
    assert serve.classroom_on({serve.CLASSROOM_ENV: value}) is on
    assert serve.classroom_on({}) is False


def test_app_root_in_a_checkout_is_the_repository():
    assert serve.app_root() == ROOT
    assert (serve.app_root() / ".streamlit" / "config.toml").is_file()


def test_command_runs_streamlit_on_the_app_with_the_options():
    cmd = serve.command(Path("/x"), port=8600, address="127.0.0.1", classroom=True,
                        extra=["--", "--server.disconnectedSessionTTL", "30"], python="py")
    assert cmd == ["py", "-m", "app.launch", "--server.port", "8600",
                   "--server.address", "127.0.0.1", "--server.maxUploadSize", "0",
                   "--server.disconnectedSessionTTL", "30"]
    assert serve.command(Path("/x"), python="py") == ["py", "-m", "app.launch"]  # run in /x


def test_environment_sets_classroom_and_makes_paths_absolute(tmp_path):
    env = serve.environment(True, {"DPVIZ_LEDGER_DIR": "ledgers", "MALLOC_ARENA_MAX": "4"}, cwd=tmp_path)
    assert env[serve.CLASSROOM_ENV] == "1"
    assert env["DPVIZ_LEDGER_DIR"] == str(tmp_path / "ledgers")
    assert env["MALLOC_ARENA_MAX"] == "4"  # the caller's choice is kept
    env = serve.environment(False, {"DPVIZ_CLASSROOM": "1"}, cwd=tmp_path)
    assert env[serve.CLASSROOM_ENV] == "1"  # the variable alone turns it on: never cleared
    assert serve.environment(False, {}, cwd=tmp_path)["MALLOC_ARENA_MAX"] == "2"
    assert serve.CLASSROOM_ENV not in serve.environment(False, {}, cwd=tmp_path)


def test_cli_parses_app_with_streamlit_options_after_dashes():
    args = cli._parser().parse_args(["app", "--port", "9000", "--classroom", "--",
                                     "--server.headless", "true"])
    assert (args.command, args.port, args.classroom) == ("app", 9000, True)
    assert serve.command(Path("/x"), args.port, args.address, args.classroom, args.streamlit_args,
                         python="py")[-2:] == ["--server.headless", "true"]
