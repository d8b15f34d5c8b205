"""Environment variables that change what runs: ``BASH_ENV=x.sh bash -c true`` runs x.sh, ``LD_PRELOAD=…``
loads a library into every program, ``GIT_PAGER=…`` runs a program of its own, ``PATH=/tmp:$PATH`` makes
``ls`` mean something else.  Setting one (as a prefix, a bare assignment, ``export``, ``declare -x``,
``env X=…``, ``read X``, ``printf -v X``) is escalated; every other variable is data.
"""

from __future__ import annotations

import re


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NAMES = _names(
    """
    BASH_ENV ENV PATH IFS PROMPT_COMMAND SHELLOPTS BASHOPTS PS0 PS1 PS2 PS4 SHELL HOME TMPDIR PWD OLDPWD
    CDPATH GLOBIGNORE BASH_LOADABLES_PATH BASH_XTRACEFD ZDOTDIR INPUTRC HISTFILE HISTCONTROL FIGNORE
    EXECIGNORE BASH_COMPAT POSIXLY_CORRECT FPATH MAIL MAILPATH TERMINFO TERMINFO_DIRS
    EDITOR VISUAL PAGER MANPAGER MANOPT MANPATH LESSOPEN LESSCLOSE LESS LESSKEY LESSSECURE BROWSER
    SYSTEMD_PAGER SYSTEMD_EDITOR SUDO_EDITOR SUDO_ASKPASS SSH_ASKPASS SSH_ASKPASS_REQUIRE DISPLAY
    PERL5OPT PERL5LIB PERLLIB PERL5DB PERLDB_OPTS PERL_MB_OPT PERL_MM_OPT
    NODE_OPTIONS NODE_PATH NODE_REPL_EXTERNAL_MODULE RUBYOPT RUBYLIB GEM_HOME GEM_PATH BUNDLE_GEMFILE
    JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS CLASSPATH MAVEN_OPTS GRADLE_OPTS LUA_INIT LUA_PATH
    LUA_CPATH TCLLIBPATH PHPRC PHP_INI_SCAN_DIR R_PROFILE R_PROFILE_USER R_ENVIRON R_ENVIRON_USER
    JULIA_LOAD_PATH DENO_DIR BUN_INSTALL
    MAKEFLAGS MFLAGS MAKEFILES MAKELEVEL MAKESHELL RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER RUSTFLAGS
    RUSTDOCFLAGS GOFLAGS GOENV GOTOOLCHAIN GOPROXY GOPATH GOROOT CGO_CFLAGS CGO_LDFLAGS
    XDG_CONFIG_HOME XDG_CONFIG_DIRS XDG_DATA_HOME XDG_DATA_DIRS CURL_HOME WGETRC GNUPGHOME
    SSH_AUTH_SOCK DOCKER_HOST DOCKER_CONFIG KUBECONFIG BASH_FUNC
    HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy
    TAR_OPTIONS ZIPOPT ZIP UNZIP UNZIPOPT GZIP BZIP2 XZ_OPT XZ_DEFAULTS ZSTD_CLEVEL CC CXX CPP LD AR AS NM
    RANLIB STRIP OBJCOPY FC F77 CFLAGS CXXFLAGS CPPFLAGS LDFLAGS LDLIBS RUSTC RUSTDOC GOFLAGS GOEXPERIMENT
    GOCACHE GOBIN GRADLE_USER_HOME GRADLE_OPTS JAVA_HOME JAVA_OPTS RIPGREP_CONFIG_PATH SSLKEYLOGFILE
    NODE_V8_COVERAGE NODE_EXTRA_CA_CERTS NODE_REDIRECT_WARNINGS NODE_PENDING_DEPRECATION COREPACK_HOME
    GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_CONFIG GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT BAT_PAGER
    BAT_CONFIG_PATH DELTA_PAGER FZF_DEFAULT_COMMAND SCREENRC TMUX_TMPDIR VIMINIT EXINIT MYVIMRC
    GNUPGHOME GPG_AGENT_INFO OPENSSL_CONF SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE REQUESTS_CA_BUNDLE
    """
)
# Whole families: the loader's, git's, Python's, npm's and pip's settings can name programs to run.
_PREFIXES = ("LD_", "DYLD_", "GIT_", "PYTHON", "NPM_CONFIG_", "YARN_", "PIP_", "CARGO_", "BASH_FUNC_",
             "PERL", "POETRY_", "UV_", "TOX_", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PRE_COMMIT", "CGO_",
             "GOPRIVATE", "GONOSUMDB", "GOINSECURE", "MAVEN_", "GRADLE_", "RUSTUP_", "CMAKE_")  # fmt: skip
# …of which these are data: names, switches, colours.
_HARMLESS = _names(
    """
    GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
    GIT_COMMITTER_DATE GIT_TERMINAL_PROMPT GIT_TRACE GIT_TRACE2 GIT_CURL_VERBOSE GIT_OPTIONAL_LOCKS
    GIT_FLUSH GIT_MERGE_AUTOEDIT GIT_ADVICE GIT_LFS_SKIP_SMUDGE
    PYTHONDONTWRITEBYTECODE PYTHONUNBUFFERED PYTHONHASHSEED PYTHONIOENCODING PYTHONUTF8
    PYTHONFAULTHANDLER PYTHONDEVMODE PYTHONSAFEPATH PYTHONNOUSERSITE PYTHONTRACEMALLOC
    PYTHONOPTIMIZE PYTHONVERBOSE CARGO_TERM_COLOR CARGO_INCREMENTAL UV_NO_PROGRESS
    """
)
# Programs named by a variable that are fine as a plain program name: `GIT_PAGER=cat`, `CC=clang make`.
_PROGRAM_VARIABLES = _names("PAGER GIT_PAGER MANPAGER SYSTEMD_PAGER EDITOR VISUAL GIT_EDITOR")
_PLAIN_PAGERS = frozenset({"", "cat", "true"})
_WARNINGS = re.compile(r"^[A-Za-z:,]*$")  # PYTHONWARNINGS=ignore::DeprecationWarning; a dotted name imports

ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=(.*)$", re.DOTALL)


def _holds_code(value: str) -> bool:
    kept = value.replace("$(…)", "").replace("`…`", "")
    return "$(" in kept or "`" in kept


def changes_what_runs(name: str, value: str | None = None) -> bool:
    """Whether setting ``name`` (to ``value``, when known) can change which program runs or what it loads.

    A value that holds a command substitution as text (``v='a[$(rm -rf ~)]'``) is code kept for later:
    bash runs it when the variable is evaluated as a number (``$((v))``, ``let``, ``[[ v -eq 1 ]]``,
    ``declare -i``), whatever the variable is called.  A substitution that ran already reads ``$(…)`` here,
    and is judged itself.
    """
    if value is not None and _holds_code(value):
        return True
    if name in _PROGRAM_VARIABLES and value is not None and value in _PLAIN_PAGERS:
        return False
    if name == "PYTHONWARNINGS":
        return value is None or not _WARNINGS.match(value)
    if name in _HARMLESS:
        return False
    return name in _NAMES or name.upper().startswith(_PREFIXES) or name.startswith("BASH_FUNC")


def risky_assignment(text: str) -> str | None:
    """The variable of ``NAME=value`` if setting it changes what runs, else None."""
    m = ASSIGNMENT.match(text)
    if m is None:
        return None
    return m.group(1) if changes_what_runs(m.group(1), m.group(3)) else None
