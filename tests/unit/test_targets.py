"""What light requests ask about: program names, environment variables, services and paths."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultops.classifier.targets import CAP, commands, env_vars, paths, services

COMMAND = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\Z")
ENV_VAR = re.compile(r"[A-Z_][A-Z0-9_]*\Z")
SERVICE = re.compile(r"[A-Za-z0-9@._-]+\Z")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Is the stripe CLI installed on the VPS? `which stripe`", ["stripe"]),
        ("node --version", ["node"]),
        ("установлен ли docker", ["docker"]),
        ("Are git, rg and jq installed on the worker?", ["git", "rg", "jq"]),
        ("check if docker and docker-compose are installed", ["docker", "docker-compose"]),
        ("`command -v ffmpeg`", ["ffmpeg"]),
        ("Is ffmpeg installed? `ffmpeg -version`", ["ffmpeg"]),
        ("python3 -V", ["python3"]),
        ("what version of postgres is on the box", ["postgres"]),
        ("Какая версия python3 стоит на сервере?", ["python3"]),
        ("есть ли на сервере rsync?", ["rsync"]),
        ("docker установлен?", ["docker"]),
        ("which stripe; rm -rf /", ["stripe"]),  # shell syntax never reaches a name
        ("which files are the biggest?", []),  # "which" as a pronoun
        ("is it installed?", []),
        ("`/usr/bin/python3 --version`", []),  # a path is not a program name
        ("is `$(rm -rf /)` installed", []),
    ],
)
def test_commands(text: str, expected: list[str]) -> None:
    assert commands(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("is STRIPE_API_KEY set", ["STRIPE_API_KEY"]),
        ("$HOME", ["HOME"]),
        ("env var FOO", ["FOO"]),
        ("env vars FOO and BAR_BAZ", ["FOO", "BAR_BAZ"]),
        ("is PATH set?", ["PATH"]),
        ("${OPENAI_API_KEY} and $PATH", ["OPENAI_API_KEY", "PATH"]),
        ("check that DATABASE_URL is defined", ["DATABASE_URL"]),
        ("Задана ли переменная окружения ANTHROPIC_API_KEY?", ["ANTHROPIC_API_KEY"]),
        ("ANTHROPIC_API_KEY задан?", ["ANTHROPIC_API_KEY"]),
        ("it costs $50", []),
        ("is $home set", []),  # lower case is not a variable name here
        ("is the API set up", []),
    ],
)
def test_env_vars(text: str, expected: list[str]) -> None:
    assert env_vars(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("is nginx running", ["nginx"]),
        ("status of postgresql", ["postgresql"]),
        ("nginx.service", ["nginx"]),
        ("запущен ли redis", ["redis"]),
        ("Is hermes-gateway.service active right now?", ["hermes-gateway"]),
        ("is the vaultops watcher still running?", ["vaultops"]),
        ("systemctl status caddy", ["caddy"]),
        ("pgrep -f vaultops", ["vaultops"]),
        ("are nginx and postgres up?", ["nginx", "postgres"]),
        ("Проверь статус nginx", ["nginx"]),
        ("Работает ли nginx?", ["nginx"]),
        ("redis работает?", ["redis"]),
        ("Is the web app up?", []),
        ("is port 80 up?", []),
        ("the branches are piling up", []),
    ],
)
def test_services(text: str, expected: list[str]) -> None:
    assert services(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("how big is ~/code/app/logs", ["~/code/app/logs"]),
        ("how big is ~/code/app/logs?", ["~/code/app/logs"]),
        ("Does /home/ccuser/HQ-Vault/COO-Inbox.md exist?", ["/home/ccuser/HQ-Vault/COO-Inbox.md"]),
        ("check ./build/out and ../x", ["./build/out", "../x"]),
        ("`/etc/hosts`", ["/etc/hosts"]),
        ("(/var/log/nginx)", ["/var/log/nginx"]),
        ("/etc/nginx/nginx.conf.", ["/etc/nginx/nginx.conf"]),
        ("files in ~/logs/*.log, please", ["~/logs/*.log"]),
        ("размер папки «~/Загрузки»", ["~/Загрузки"]),
        ("see https://example.com/foo/bar", []),  # a URL is not a path
        ("and/or 24/7 I/O", []),
        ("~/", []),
    ],
)
def test_paths(text: str, expected: list[str]) -> None:
    assert paths(text) == expected


def test_duplicates_are_dropped_and_order_kept() -> None:
    assert commands("is jq installed? `which jq` and `jq --version`, also git --version") == ["jq", "git"]
    assert paths("~/a and /b then ~/a again") == ["~/a", "/b"]


def test_results_are_capped() -> None:
    names = [f"tool{i}" for i in range(15)]
    assert commands("are " + ", ".join(names) + " installed?") == names[:CAP]
    assert paths(" ".join(f"/srv/d{i}" for i in range(15))) == [f"/srv/d{i}" for i in range(CAP)]
    assert len(env_vars(" ".join(f"$V{i}" for i in range(15)))) == CAP


@given(st.text())
def test_extractors_never_raise_and_return_safe_values(text: str) -> None:
    for extract, valid in ((commands, COMMAND), (env_vars, ENV_VAR), (services, SERVICE)):
        found = extract(text)
        assert len(found) <= CAP and len(set(found)) == len(found)
        assert all(valid.match(name) for name in found), found
    found = paths(text)
    assert len(found) <= CAP and len(set(found)) == len(found)
    assert all(p in text and p[0] in "~./" and p[-1] not in ".,;:!?" for p in found), found


NOISE = st.sampled_from(["is", "the", "installed", "which", "running", "status of", "$", "`", ";", "&&", "|",
                         "~/x", "/etc/y", "--version", "ли", "установлен", "запущен", ",", "and", "?", "\n",
                         "rm -rf /", "$(id)", "nginx", "FOO_BAR", "set"])


@given(st.lists(NOISE, max_size=30).map(" ".join))
def test_shell_syntax_never_leaks_into_names(text: str) -> None:
    for name in commands(text) + services(text) + env_vars(text):
        assert not set(name) & set(" ;&|$`()<>/\\'\"\n"), name
