"""What a light request asks about: program names, environment variables, services and paths.

Pure extraction, used by the classifier (a light type needs at least one target) and later by the built-in
read-only checks.  Every value is checked against a strict pattern, because a check passes it to
``which``, ``systemctl is-active`` or ``stat`` as a single argument: no paths in command names, no shell
syntax anywhere.  Results keep the order of first mention, without duplicates, at most ``CAP``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

CAP = 10
COMMAND_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\Z")
ENV_VAR_RE = re.compile(r"[A-Z_][A-Z0-9_]*\Z")
SERVICE_RE = re.compile(r"[A-Za-z0-9@._-]+\Z")

# Words the patterns below can pick up that are not names of programs or services.
_STOP = frozenset({"a", "all", "an", "and", "any", "api", "app", "are", "backup", "be", "binary", "both",
                   "box", "cli", "client", "command", "daemon", "database", "db", "everything",
                   "executable", "here", "host", "i", "if", "installed", "is", "it", "its", "latest",
                   "local", "machine", "me", "my", "new", "not", "of", "on", "or", "our", "package",
                   "path", "process", "program", "server", "service", "services", "site", "some", "still",
                   "system", "that", "the", "there", "these", "this", "those", "tool", "utility",
                   "version", "versions", "vps", "we", "web", "website", "what", "whether", "which", "who",
                   "worker", "yes", "you", "systemctl", "launchctl", "pgrep", "check", "port"})
_SEP = r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|и|или)\s+)"
_NAME = r"[A-Za-z0-9][A-Za-z0-9._+-]*"
_NAMES = rf"{_NAME}(?:{_SEP}{_NAME}){{0,29}}"
_SPLIT = re.compile(_SEP)

_COMMANDS = tuple(
    re.compile(p, re.IGNORECASE | re.MULTILINE)
    for p in (
        # `which stripe`, command -v node, type -p jq, whereis rg
        rf"(?<![\w-])(?:which|command\s+-v|type\s+-[pa]|whereis)\s+({_NAME})(?=\s*(?:[`?;|&)'\"]|$))",
        # node --version, python3 -V, stripe version
        rf"(?<![\w./~-])({_NAME})\s+(?:--version|-version|-v|version)(?![\w-])",
        # is the stripe CLI installed? are git, rg and jq installed? whether docker is on the PATH
        rf"(?<![\w-])(?:is|are|whether|if|that)\s+(?:the\s+|a\s+)?({_NAMES})(?:\s+(?:cli|binary|command|tool"
        rf"|package"
        r"|client|utility|executable|program)s?)?\s+(?:is\s+|are\s+)?(?:still\s+|already\s+"
        r"|actually\s+)?(?:installed|available|present|on\s+(?:the\s+)?path|in\s+(?:the\s+)?path)(?![\w-])",
        rf"(?<![\w./~-])({_NAME})\s+(?:is\s+|are\s+)?(?:installed|установлен\w*|стоит|есть)(?![\w-])",
        rf"(?<![\w-])(?:versions?\s+of|верси[яюиейм])\s+(?:the\s+)?({_NAME})",
        # установлен ли docker, есть ли на сервере jq, доступен ли rg
        r"(?<![\w-])(?:установлен[аоы]?|есть|стоит|доступ(?:ен|на|но))\s+ли\s+(?:(?:у\s+нас|на\s+\S+"
        r"|в\s+системе)\s+)?"
        rf"(?:(?:утилита|команда|пакет|программа|бинарник)\s+)?({_NAMES})",
    )
)
_VAR = r"[A-Z_][A-Z0-9_]*"
_VARS = rf"\$?{_VAR}(?:{_SEP}\$?{_VAR}){{0,29}}"
_ENV = tuple(
    re.compile(p)
    for p in (
        rf"\$\{{?({_VAR})",  # $HOME, ${FOO}
        rf"(?i:env(?:ironment)?\s+var(?:iable)?s?|variables?"
        rf"|переменн\w*(?:\s+окружени\w*)?)\s+({_VARS})(?![\w-])",
        rf"(?i:(?<![\w-])(?:is|are|whether|if"
        rf"|that)\s+(?:the\s+)?)({_VARS})(?i:\s+(?:env(?:ironment)?\s+)?(?:var"
        r"(?:iable)?\s+)?(?:(?:is|are)\s+)?(?:still\s+|actually\s+)?(?:set|defined|exported|present"
        r"|configured|empty|non-empty|available))(?![\w-])(?!\s+up(?!\w))",  # not "is the API set up"
        rf"(?<![\w$-])({_VAR})(?i:\s+(?:is\s+)?(?:set(?!\s+up(?!\w))|defined|exported)"
        rf"|\s+(?:задан\w*|установлен\w*|определен\w*))",
        rf"(?i:(?:задан|установлен|определен)[аоы]?\s+ли\s+(?:переменн\w*\s+)?(?:окружени\w*\s+)?)({_VARS})",
        r"(?<![\w$-])([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])(?![\w-])",  # an upper-case name with _ is a variable
    )
)
_SVC = r"[A-Za-z0-9@_-][A-Za-z0-9@._-]*"
_QUAL = (r"(?:service|daemon|server|process|container|worker|unit|app|job|timer|gateway|bot|api|agent|queue"
         r"|watcher|scheduler|listener|runner|poller|monitor)s?")
_SERVICES = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"(?<![\w.-])(?:systemctl\s+(?:--?[\w-]+\s+)*(?:status|is-active|is-enabled|is-failed)|service"
        rf"|pgrep(?:\s+-\w+)*|launchctl\s+list)\s+({_SVC})",
        rf"(?<![\w-])(?:is|are|whether|if|that)\s+(?:the\s+|my\s+"
        rf"|our\s+)?({_SVC}(?:{_SEP}{_SVC}){{0,29}})(?:\s+{_QUAL})?"
        r"\s+(?:still\s+|currently\s+|actually\s+|really\s+)?(?:running|up|active|alive|listening|responding"
        r"|healthy|started|enabled|down|dead|stopped|failing|failed|crashed|working)(?![\w-])",
        rf"(?<![\w-])(?:status|state|health)\s+of\s+(?:the\s+)?({_SVC})",
        rf"(?<![\w@.-])({_SVC})\.service(?![\w.-])",
        rf"(?<![\w@.-])({_SVC})\s+(?:service\s+)?status(?![\w-])",
        r"(?<![\w-])(?:запущен[аоы]?|работа(?:ет|ют)|жив[аоы]?|поднят[аоы]?|активн\w*"
        r"|упал[аои]?)\s+ли\s+(?:(?:сервис"
        rf"|служба|демон|процесс|контейнер)\s+)?({_SVC})",
        rf"(?<![\w-])(?:статус|состояни)\w*\s+(?:(?:сервиса|службы|демона|юнита|процесса)\s+)?({_SVC})",
        rf"(?<![\w@.-])({_SVC})\s+(?:запущен|работает|жив|поднят|упал|лежит)",
    )
)
_PATH = re.compile(
    r"(?<![\w.~/:@$-])(?:~/[^\s`'\"<>|;,()\[\]{}«»]*|\.{1,2}/[^\s`'\"<>|;,()\[\]{}«»]+"
    r"|/[^\s`'\"<>|;,()\[\]{}«»/][^\s`'\"<>|;,()\[\]{}«»]*)"
)
_TRAILING = ".,;:!?)]}'\"`…»"


def commands(text: str) -> list[str]:
    """Program names asked about: "is the stripe CLI installed? `which stripe`" -> ["stripe"]."""
    return _collect(_COMMANDS, text, COMMAND_RE, _not_version)


def env_vars(text: str) -> list[str]:
    """Environment variable names asked about: "is STRIPE_API_KEY set", "$HOME", "env var FOO"."""
    return _collect(_ENV, text, ENV_VAR_RE, lambda name: name != "_", strip="$", stop=frozenset())


def services(text: str) -> list[str]:
    """Service names: "is nginx running", "status of postgresql", "nginx.service", "запущен ли redis"."""
    names = _collect(_SERVICES, text, SERVICE_RE, _service_like, suffix=".service")
    return _dedupe(n.removesuffix(".service") for n in names)


def paths(text: str) -> list[str]:
    """Absolute, ~/ and ./ paths mentioned: "how big is ~/code/app/logs?" -> ["~/code/app/logs"]."""
    found = (m.group(0).rstrip(_TRAILING) for m in _PATH.finditer(text))
    return _dedupe(p for p in found if len(p) > 1 and p not in ("~/", "./", "../"))


def _collect(
    patterns: Iterable[re.Pattern[str]], text: str, valid: re.Pattern[str], keep: Callable[[str], bool],
    strip: str = "", suffix: str = "", stop: frozenset[str] = _STOP,
) -> list[str]:
    hits: list[tuple[int, str]] = []
    for pattern in patterns:
        for m in pattern.finditer(text):
            for name in _SPLIT.split(m.group(1)):
                name = name.strip().lstrip(strip).rstrip(".")
                if suffix and name.endswith(suffix):
                    name = name[: -len(suffix)]
                if name and valid.match(name) and name.lower() not in stop and keep(name):
                    hits.append((m.start(1), name))
    return _dedupe(name for _, name in sorted(hits, key=lambda h: h[0]))


def _service_like(name: str) -> bool:
    """Not a version number, and not an -ing word ("the branches are piling up")."""
    return _not_version(name) and not re.fullmatch(r"[a-z]+ing", name)


def _not_version(name: str) -> bool:
    return not re.fullmatch(r"[\d.]+", name)


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))[:CAP]
