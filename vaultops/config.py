"""Configuration: ``.vaultops/config.toml``, then ``.vaultops/local.toml`` over it, then ``VAULTOPS_*``.

Unknown keys and wrong types are errors that name the file (or variable), the key and what was expected:
a typo must never silently fall back to a default.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from vaultops.base.argv import check_template
from vaultops.base.claude_code import gate_problem, is_claude
from vaultops.base.config_files import read_toml
from vaultops.base.durations import parse_duration
from vaultops.base.errors import ConfigError
from vaultops.base.layout import CONFIG_FILE as CONFIG_FILE  # re-exported: where the rest of vaultops looks
from vaultops.base.layout import CONFIG_FILES, DEFAULT_INBOX, DEFAULT_QUEUE
from vaultops.base.layout import LOCAL_FILE as LOCAL_FILE
from vaultops.model import Limits

ENV_PREFIX = "VAULTOPS_"
TELEGRAM_TOKEN_ENV = "VAULTOPS_TELEGRAM_TOKEN"  # the bot token, when it is not in local.toml
ZULIP_KEY_ENV = "VAULTOPS_ZULIP_API_KEY"  # the Zulip bot's API key, when it is not in local.toml
# vaultops's own secrets: the agents it starts get none of them (their notices go through vaultops)
_OWN_SECRETS = (TELEGRAM_TOKEN_ENV, ZULIP_KEY_ENV, "VAULTOPS_NOTIFY_")


def agent_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment an agent vaultops starts inherits: this one without vaultops's own secrets, and
    without systemd's NOTIFY_SOCKET, which belongs to the daemon alone."""
    return {k: v for k, v in environ.items() if k != "NOTIFY_SOCKET" and not k.startswith(_OWN_SECRETS)}


# what a check needs to find and run its programs; nothing of the daemon's own (tokens, keys, URLs)
_CHECK_VARIABLES = frozenset((
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "VIRTUAL_ENV",
    "CONDA_PREFIX", "PYENV_ROOT", "NVM_DIR", "NODE_PATH", "GOPATH", "GOROOT", "GOCACHE", "CARGO_HOME",
    "RUSTUP_HOME", "JAVA_HOME", "GRADLE_USER_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
))  # fmt: skip


def check_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a review's checks run in: where programs and caches are, and the locale.  A check
    runs the job's code unwatched, so it gets none of the daemon's variables (an agent's API key, a
    GITHUB_TOKEN) to print in a way no redaction would recognise."""
    return {k: v for k, v in environ.items() if k in _CHECK_VARIABLES or k.startswith("LC_")}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentConfig(_Section):
    name: str = Field("vaultops", min_length=1, pattern=r"^[A-Za-z0-9._@-]+$")
    host: str = Field("", pattern=r"^[A-Za-z0-9._-]*$")  # "" means this machine's hostname


class InboxConfig(_Section):
    path: str = DEFAULT_INBOX
    settle: float = Field(3.0, ge=0)
    max_mb: float = Field(20.0, gt=0)


class QueueConfig(_Section):
    folder: str = DEFAULT_QUEUE


class LimitsConfig(_Section):
    max_concurrent: int = Field(3, ge=1, le=64)
    daily_budget_usd: float = Field(10.0, ge=0)
    allowed_roots: tuple[str, ...] = ()
    lock_wait: float = Field(5.0, ge=0)
    pause_after: int = Field(3, ge=0)  # a schedule's failed runs in a row before it is paused (0: never)
    # an agent's account at its usage limit: its requests wait for the reset and go on then ("wait"), or
    # go to the route's next profile at once as other failures do ("fallback"); docs/quota.md
    on_quota: Literal["wait", "fallback"] = "wait"
    # where code jobs' worktrees go ("": .vaultops-worktrees in the allowed root that holds the repo)
    worktrees: str = ""
    # dollars per million tokens, [input, output], for models whose name holds the key; what a run has
    # spent is counted with these while it runs (vaultops.run.meter has the list prices)
    prices: dict[str, tuple[Annotated[float, Field(ge=0)], Annotated[float, Field(ge=0)]]] = Field(
        default_factory=dict
    )


SHELL_TOOLS = frozenset({"Bash", "Shell", "shell", "bash"})


class ProfileConfig(_Section):
    command: tuple[str, ...] = Field(min_length=1)
    output: Literal["text", "claude-json"] = "text"
    timeout: float = Field(600.0, gt=0)
    inactivity_timeout: float | None = Field(None, gt=0)
    workdir: str = ""
    env: dict[str, str] = Field(default_factory=dict)
    health: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None  # what it may use; {tools} in the command fills --allowedTools
    prompt_template: str = ""  # replaces the default prompt; {text}, {context} and {report} fill it
    # a long-lived session, for workers (`worker spawn --profile`, plan notes with `worker:`); for Claude
    # Code: -p with stream-json in and out, so it stays alive between the messages written to its input
    worker_command: tuple[str, ...] | None = Field(None, min_length=1)
    # the policy gate in front of its agent's tool calls: "claude" (Claude Code's hook, put on its command
    # line by vaultops), or "none": the person accepts that nothing guards this agent.  Unset: "claude" for
    # a Claude Code command, else ungated, which a profile that gives its agent a shell must not be.
    gate: Literal["claude", "none"] | None = None
    # what one run may spend, counted by vaultops from Claude Code's stream-json as it arrives
    max_cost_usd: float | None = Field(None, gt=0)
    max_turns: int | None = Field(None, ge=1)
    # a code job's review before done: its checks (argv lists, never a shell) run in its worktree
    review: bool = False
    checks: tuple[tuple[str, ...], ...] = ()
    # the operating system's sandbox around every command its agent runs (and its checks): the hosts they
    # may reach (none by default; WebFetch and WebSearch follow the same list), and folders they may write
    # beyond the job's own (a package cache, say)
    domains: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()

    @field_validator("domains")
    @classmethod
    def _hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for host in value:
            if not re.fullmatch(r"(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*", host):
                raise ValueError(f'domains are host names such as "pypi.org" or "*.npmjs.org", not {host!r}')
        return value

    @field_validator("checks")
    @classmethod
    def _argv_checks(cls, value: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
        if any(not argv or not argv[0].strip() for argv in value):
            raise ValueError('checks are argv lists, each with a program: checks = [["pytest", "-q"]]')
        return value

    @property
    def limits(self) -> Limits:
        return Limits(self.max_cost_usd, self.max_turns)

    def metering_problem(self) -> str:
        """Why vaultops cannot count this profile's spend as it runs, or "" (it can, or need not)."""
        if self.output != "claude-json":
            return (
                'only a Claude Code profile (output = "claude-json") can be held to max_cost_usd or max_turns'
            )
        if not is_claude(self.command) and "stream-json" not in self.command:
            return (
                "can be held to max_cost_usd or max_turns only if its command is `claude …` or prints "
                "--output-format stream-json"
            )
        return ""

    @property
    def gated(self) -> bool:
        return self.gate == "claude" or (self.gate is None and is_claude(self.command))

    def gate_problem(self) -> str:
        """Why this profile cannot run as configured, as far as its gate goes, or ""."""
        if self.gated:
            for command in (self.command, self.worker_command or ()):
                if problem := gate_problem(command):
                    return f"is gated by the policy, but {problem}"
            return ""
        shell = [t for t in self.allowed_tools() or () if t.split("(", 1)[0].strip() in SHELL_TOOLS]
        if self.gate is None and shell:
            return (
                f"gives its agent a shell ({shell[0]}), but vaultops can gate only Claude Code's tool calls; "
                'say gate = "none" to run it ungated, knowingly, or run Claude Code'
            )
        return ""

    def allowed_tools(self) -> tuple[str, ...] | None:
        """Its ``tools``, else the literal list after ``--allowedTools`` in its command; None if neither."""
        if self.tools is not None:
            return self.tools
        command = list(self.command)
        if "--allowedTools" in command[:-1]:
            literal = command[command.index("--allowedTools") + 1]
            if "{" not in literal:
                return tuple(t.strip() for t in literal.replace(" ", ",").split(",") if t.strip())
        return None


def _seconds(value: object) -> object:
    """A duration as the person writes it (``4h``, ``30m``, ``1d``, or a number of seconds)."""
    if isinstance(value, str):
        seconds = parse_duration(value)
        if seconds is None:
            raise ValueError(f"{value!r} is not a duration; write seconds, or 30m, 4h, 1d")
        return seconds
    return value


Seconds = Annotated[float, BeforeValidator(_seconds), Field(ge=0)]


def _trimmed_secret(value: SecretStr, name: str) -> SecretStr:
    """A secret as pasted, without the space or line end around it; one with a space inside is a typo
    (said without the secret itself: pydantic quotes a refused value)."""
    secret = value.get_secret_value().strip()
    if any(c.isspace() or ord(c) < 32 for c in secret):
        raise ValueError(f"{name} has a space or a control character inside it; copy it again, on one line")
    return SecretStr(secret)


class TelegramConfig(_Section):
    """``[notify.telegram]``: escalations sent by a bot, with buttons, and the person's presses and
    ``approve``/``deny`` replies read back."""

    # A secret: local.toml or VAULTOPS_TELEGRAM_TOKEN, never the committed config.toml.  SecretStr keeps it
    # out of reprs and error messages.
    token: SecretStr = SecretStr("")
    chat_ids: tuple[int, ...] = ()  # where notices go, and the only chats whose replies count
    # Telegram user ids whose presses and replies count.  Empty: in a private chat its person, and in a
    # group nobody's press (anyone in a group can press a button)
    users: tuple[int, ...] = ()
    api_base: str = Field("https://api.telegram.org", pattern=r"^https?://[^\s/]+(/\S*)?$")
    poll_timeout: float = Field(25.0, ge=0, le=50)  # seconds getUpdates waits for a reply (Telegram: ≤ 50)
    # Telegram's buttons open only http(s) and tg:// links, so an Open button cannot hold obsidian://
    # itself: an https page of yours that forwards to the link put in for {link} (percent-encoded)
    open_url: str = Field("", pattern=r"^(https?://\S*\{link\}\S*)?$")

    @property
    def enabled(self) -> bool:
        return bool(self.token.get_secret_value() or self.chat_ids)

    @field_validator("token")
    @classmethod
    def _one_token(cls, value: SecretStr) -> SecretStr:
        return _trimmed_secret(value, "[notify.telegram] token")

    @property
    def listening(self) -> bool:
        """It can read answers: a token, and chats to trust."""
        return bool(self.token.get_secret_value() and self.chat_ids)


class ZulipConfig(_Section):
    """``[notify.zulip]``: notices to a stream's topic (a topic per worker persona), the person
    @-mentioned on escalations, and answers read back from the stream."""

    site: str = Field("", pattern=r"^(https?://[^\s/]+(/\S*)?)?$")  # https://example.zulipchat.com
    email: str = ""  # the bot's address, as Zulip's "Bots" settings show it
    # A secret, like the Telegram token: local.toml or VAULTOPS_ZULIP_API_KEY
    api_key: SecretStr = SecretStr("")
    stream: str = ""
    topic: str = Field("vaultops", min_length=1, max_length=60)
    mention: str = ""  # the person's Zulip name, @-mentioned when something waits for them
    senders: tuple[str, ...] = ()  # the addresses whose answers count; empty: none count

    @property
    def enabled(self) -> bool:
        return bool(self.site or self.email or self.api_key.get_secret_value() or self.stream)

    @property
    def listening(self) -> bool:
        return bool(self.enabled and self.api_key.get_secret_value() and self.senders)

    @field_validator("api_key")
    @classmethod
    def _one_key(cls, value: SecretStr) -> SecretStr:
        return _trimmed_secret(value, "[notify.zulip] api_key")


_CLOCK = re.compile(r"^([01]?[0-9]|2[0-3]):[0-5][0-9]$")


class NotifyConfig(_Section):
    urls: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()  # apprise URLs that get the messages a failing channel could not take
    answer_within: Seconds = 86400.0  # a button pressed on a message older than this does nothing
    remind: Seconds = 14400.0  # an escalation still open this long is reminded, once (0: never)
    digest: str = ""  # "08:00": each day at this local time, a list of what waits and what failed
    failing_after: int = Field(3, ge=1)  # failed tries in a row before a channel is failing
    # the vault's name in the messages' obsidian:// links, as Obsidian on the phone calls it: "" names it
    # after this machine's folder, which is right only where the folders share one name
    vault_name: str = ""
    telegram: TelegramConfig = TelegramConfig()
    zulip: ZulipConfig = ZulipConfig()

    @field_validator("vault_name")
    @classmethod
    def _folder_name(cls, value: str) -> str:
        name = value.strip()
        if any(c in name for c in "/\\") or any(ord(c) < 32 or ord(c) == 127 for c in name):
            raise ValueError(
                f"[notify] vault_name {value!r} is not a vault's name: write the name Obsidian shows in its "
                "vault switcher, without / or \\ (or leave it empty for this machine's folder name)"
            )
        return name

    @field_validator("digest")
    @classmethod
    def _clock_time(cls, value: str) -> str:
        if value and not _CLOCK.fullmatch(value.strip()):
            raise ValueError(f"{value!r} is not a time of day; write it as 08:00, or leave it empty")
        return value.strip()


class GitConfig(_Section):
    push: bool = True  # with a remote: claims and results go through it (false: commit locally only)
    claim_offline: bool = False  # with a remote that cannot be reached: claim anyway (one machine only)
    remote: str = "origin"
    lease_margin: float = Field(120.0, ge=0)  # seconds past a job's longest run before others take over
    # seconds a daemon gathers changes to the daily note and the dashboard alone before it commits them:
    # each claim and each result is one commit, not followed by one more for the notes vaultops draws
    batch: float = Field(120.0, ge=0)


class AnswersConfig(_Section):
    """``[answers]``: whose answers under a request count.  ``authors`` unset: anyone who can write the note;
    set: only answers that git commits by these authors (``Name <email>``, as git prints them) brought in."""

    authors: tuple[str, ...] | None = None

    @field_validator("authors")
    @classmethod
    def _name_and_email(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and not value:
            raise ValueError(
                "[answers] authors is empty, so no answer would ever count; name someone or remove it"
            )
        for who in value or ():
            if not _AUTHOR.fullmatch(who):
                raise ValueError(
                    f'[answers] authors: {who!r} is not an author as git names one; write "Name <email>"'
                )
        return value


_AUTHOR = re.compile(r"[^<>\s][^<>]*\s<[^<>\s]+>")


class HealthConfig(_Section):
    ttl: float = Field(300.0, ge=0)  # seconds a check's answer is trusted
    slow: float = Field(5.0, gt=0)  # answered, but slower than this: degraded
    timeout: float = Field(30.0, gt=0)  # no answer within this: offline


class RetryConfig(_Section):
    rate_limit_delays: tuple[float, ...] = (1.0, 4.0, 16.0)
    # a request that failed the same way this many times in a row is not retried again: the person is
    # asked, with each attempt's failure (vaultops.run.streak)
    same_failure_limit: int = Field(3, ge=1, le=100)


class RecordConfig(_Section):
    max_lines: int = Field(200, ge=5)
    daily_note: bool = True
    backups: int = Field(20, ge=1)


class DaemonConfig(_Section):
    grace: float = Field(30.0, ge=0)  # seconds running jobs may finish after SIGTERM before interrupted
    reconcile: float = Field(60.0, gt=0)  # seconds between full passes, in case a watch event was missed
    debounce: float = Field(0.005, ge=0)  # seconds a burst of file events is gathered into one pass
    fetch: float = Field(10.0, gt=0)  # seconds between fetches from the remote, for requests pushed elsewhere
    # a dead-man's switch (healthchecks.io, Uptime Kuma push): pinged while passes go well, its fail form
    # when one fails; a secret, as anyone holding it can keep the alarm quiet
    heartbeat_url: SecretStr = SecretStr("")
    peer_silent: Seconds = 1800.0  # another machine's note unchanged this long: said once (0: never)

    @field_validator("heartbeat_url")
    @classmethod
    def _heartbeat_url(cls, value: SecretStr) -> SecretStr:
        url = _trimmed_secret(value, "[daemon] heartbeat_url").get_secret_value()
        if url and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
            raise ValueError("[daemon] heartbeat_url must be an http(s) URL, as the monitor shows it")
        return SecretStr(url)


class DashboardConfig(_Section):
    """``[dashboard]``: the note that shows the whole fleet (vaultops.render.dashboard), and each machine's
    own note beside it, in the folder named like it (``_System/vaultops/``)."""

    path: str | Literal[False] = "_System/vaultops.md"  # false: neither the dashboard nor machine notes
    heartbeat: Seconds = 900.0  # a machine's note is rewritten at most this often when nothing else changed

    @field_validator("path")
    @classmethod
    def _note_path(cls, value: str | bool) -> str | bool:
        if value is True:
            raise ValueError('[dashboard] path is a note\'s path ("_System/vaultops.md") or false')
        if isinstance(value, str) and (not value.endswith(".md") or value.startswith("/") or ".." in value):
            raise ValueError(
                f'[dashboard] path {value!r} must be a .md note inside the vault ("_System/vaultops.md")'
            )
        return value


class WorkersConfig(_Section):
    """``[workers]``: long-lived worker sessions (vaultops.workers)."""

    max: int | None = Field(None, ge=1, le=256)  # workers alive at once; unset: [limits] max_concurrent
    stale_after: float = Field(600.0, gt=0)  # seconds without a line of its own before a worker is stale
    grace: float = Field(10.0, ge=0)  # seconds between TERM and KILL on terminate
    log_max_bytes: int = Field(1_000_000, ge=64)  # a worker's log rotates at this size
    log_keep: int = Field(3, ge=1, le=100)  # rotated logs kept besides the current one
    timeout: float = Field(14400.0, gt=0)  # seconds a worker running a plan note may take (default and most)


class ClassifyConfig(_Section):
    """``[classify]``: a model's second opinion on each request (vaultops.classifier.triage), which can only
    make a request stricter.  ``triage`` names a profile ("" asks no model)."""

    triage: str = ""
    triage_timeout: float = Field(60.0, gt=0)  # seconds, and never more than the profile's own timeout


class Config(_Section):
    agent: AgentConfig = AgentConfig()
    inbox: InboxConfig = InboxConfig()
    queue: QueueConfig = QueueConfig()
    limits: LimitsConfig = LimitsConfig()
    profiles: dict[str, ProfileConfig] = Field(default_factory=dict)
    routing: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    notify: NotifyConfig = NotifyConfig()
    git: GitConfig = GitConfig()
    record: RecordConfig = RecordConfig()
    health: HealthConfig = HealthConfig()
    retry: RetryConfig = RetryConfig()
    daemon: DaemonConfig = DaemonConfig()
    dashboard: DashboardConfig = DashboardConfig()
    workers: WorkersConfig = WorkersConfig()
    # never from VAULTOPS_* variables either: a process's environment must not choose whose answers count
    answers: AnswersConfig = AnswersConfig()
    classify: ClassifyConfig = ClassifyConfig()
    # action -> verdict over the approval table's defaults (vaultops.policy.table); never from VAULTOPS_*
    # variables, so that a process's environment cannot loosen what guards it
    policy: dict[str, Literal["approve", "escalate", "deny"]] = Field(default_factory=dict)

    @field_validator("policy")
    @classmethod
    def _policy_actions(cls, value: dict[str, str]) -> dict[str, str]:
        # here, not at the top: the table imports difflib (for its suggestions), a cost every command that
        # reads its config would pay, though only a config with a [policy] table needs it
        from vaultops.policy.table import check_overrides

        problems = check_overrides(value)[1]
        if problems:
            raise ValueError(problems[0])
        return value

    @field_validator("profiles")
    @classmethod
    def _profile_names(cls, value: dict[str, ProfileConfig]) -> dict[str, ProfileConfig]:
        for name, profile in value.items():
            problems = check_template(profile.command)
            if problems:
                raise ValueError(f"[profiles.{name}] command: {problems[0]}")
            if problem := profile.gate_problem():
                raise ValueError(f"[profiles.{name}] {problem}")
            if profile.limits and (problem := profile.metering_problem()):
                raise ValueError(f"[profiles.{name}] {problem}")
        return value

    @field_validator("classify")
    @classmethod
    def _triage_profile(cls, value: ClassifyConfig, info: ValidationInfo) -> ClassifyConfig:
        profiles = info.data.get("profiles")
        if value.triage and isinstance(profiles, dict) and value.triage not in profiles:
            known = ", ".join(sorted(profiles)) or "none are defined"
            raise ValueError(
                f"[classify] triage names {value.triage!r}, which is not under [profiles] ({known}); "
                "name one of them, or remove the line to classify by the rules alone"
            )
        return value

    @model_validator(mode="after")
    def _silence_outlasts_heartbeat(self) -> Config:
        # a machine is heard from once a heartbeat when idle: a shorter silence would call it quiet
        silent, beat = self.daemon.peer_silent, self.dashboard.heartbeat
        if silent and self.dashboard.path is not False and silent <= beat:
            raise ValueError(
                f"[daemon] peer_silent ({silent:g} s) must be longer than [dashboard] heartbeat "
                f"({beat:g} s): an idle machine is heard from once a heartbeat; make it twice as long"
            )
        return self

    @model_validator(mode="after")
    def _routes_name_profiles(self) -> Config:
        for kind, names in self.routing.items():
            for name in names:
                if name not in self.profiles:
                    known = ", ".join(sorted(self.profiles)) or "none are defined"
                    raise ValueError(
                        f"[routing] {kind} names {name!r}, which is not under [profiles] ({known})"
                    )
        return self

    def route_for(self, kind: str) -> tuple[str, ...]:
        return self.routing.get(kind) or self.routing.get("default") or ()


_SECTIONS = frozenset(
    {
        "agent",
        "inbox",
        "queue",
        "limits",
        "notify",
        "git",
        "record",
        "health",
        "retry",
        "daemon",
        "workers",
        "classify",
        "dashboard",
    }
)


_SECRET_VARS = {TELEGRAM_TOKEN_ENV: ("telegram", "token"), ZULIP_KEY_ENV: ("zulip", "api_key")}


def _env_layer(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[tuple[str, str], str]]:
    """Settings from ``VAULTOPS_<SECTION>_<KEY>`` variables, and which variable set each one."""
    layer: dict[str, Any] = {}
    origin: dict[tuple[str, str], str] = {}
    for var, raw in environ.items():
        if not var.startswith(ENV_PREFIX):
            continue
        if var in _SECRET_VARS:  # named as secrets usually are, not VAULTOPS_<SECTION>_<KEY>
            if raw:
                channel, key = _SECRET_VARS[var]
                layer.setdefault("notify", {}).setdefault(channel, {})[key] = raw  # any text is valid
            continue
        rest = var[len(ENV_PREFIX) :].lower()
        section, _, key = rest.partition("_")
        if section not in _SECTIONS or not key:
            continue  # VAULTOPS_VAULT and friends are not settings
        value: Any = raw
        if raw.startswith("["):
            try:
                value = json.loads(raw)
            except json.JSONDecodeError:
                value = raw
        elif key in ("allowed_roots", "urls", "fallback"):
            value = [p for p in raw.split(",") if p]
        layer.setdefault(section, {})[key] = value
        origin[(section, key)] = var
    return layer, origin


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _has_path(layer: Mapping[str, Any], loc: tuple[str, ...]) -> bool:
    node: Any = layer
    for part in loc:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _describe(loc: tuple[str | int, ...]) -> str:
    parts = [str(p) for p in loc]
    if len(parts) >= 3 and parts[0] == "profiles":
        return f"[profiles.{parts[1]}] {'.'.join(parts[2:])}"
    if len(parts) >= 3 and parts[:2] == ["notify", "telegram"]:
        return f"[notify.telegram] {'.'.join(parts[2:])}"
    if len(parts) >= 2:
        return f"[{parts[0]}] {'.'.join(parts[1:])}"
    return f"[{parts[0]}]" if parts else "the file"


def _known_keys(loc: tuple[str | int, ...]) -> str:
    model: type[BaseModel] = Config
    for part in loc[:-1]:
        if model is Config and part == "profiles":
            model = ProfileConfig
            continue
        field = model.model_fields.get(str(part))
        if (
            field is None
            or not isinstance(field.annotation, type)
            or not issubclass(field.annotation, BaseModel)
        ):
            break
        model = field.annotation
    return ", ".join(model.model_fields)


def _message(err: Mapping[str, Any]) -> str:
    loc = tuple(str(p) for p in err["loc"])
    where = _describe(loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        return f"{where} is not a known setting (known here: {_known_keys(loc)})"
    if kind == "missing":
        return f"{where} is required"
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    got = err.get("input")
    msg = str(err["msg"])  # only its first letter is lowered: it may quote a pattern or a name
    return f"{where} {msg[:1].lower()}{msg[1:]}, got {got!r}"


class SharedConfigError(ConfigError):
    """The vault's shared ``config.toml`` (the one every machine pulls) does not load, while this machine's
    own ``local.toml`` does.  A daemon keeps running on the config it last loaded (or, started so, waits and
    keeps pulling) until the fix arrives: a typo pushed from a phone must not strand the fleet."""


def load_config(vault: Path, environ: Mapping[str, str] | None = None, *, shared: bool = True) -> Config:
    """The vault's config: ``config.toml``, ``local.toml`` over it, the environment over both.
    ``shared=False`` leaves ``config.toml`` out (a daemon waiting for a shared config that loads)."""
    environ = os.environ if environ is None else environ
    shared_path, local_path = (vault / name for name in CONFIG_FILES)
    local = read_toml(local_path)  # a broken local.toml stops this machine: its own file, its own fix
    try:
        shared_layer = read_toml(shared_path) if shared else {}
        return _validated(shared_path, shared_layer, local_path, local, environ)
    except ConfigError as exc:
        if exc.message.startswith(str(shared_path)):  # it alone, or it with local.toml (a rule across both)
            raise SharedConfigError(exc.message) from None
        raise


def _validated(
    shared_path: Path,
    shared: dict[str, Any],
    local_path: Path,
    local: dict[str, Any],
    environ: Mapping[str, str],
) -> Config:
    env, env_origin = _env_layer(environ)
    merged = _merge(_merge(shared, local), env)
    try:
        return Config.model_validate(merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(str(p) for p in err["loc"])
        if not loc:  # a rule across settings: name the files that hold any
            files = ((shared_path, shared), (local_path, local))
            source = " with ".join(str(p) for p, layer in files if layer) or str(shared_path)
        elif len(loc) >= 2 and (loc[0], loc[1]) in env_origin:
            source = f"the environment variable {env_origin[(loc[0], loc[1])]}"
        elif _has_path(local, loc) or (loc and _has_path(local, loc[:-1]) and not _has_path(shared, loc)):
            source = str(local_path)
        else:
            source = str(shared_path)
        raise ConfigError(f"{source}: {_message(err)}") from None
