"""Where an installer takes its code from: a package registry the person chose, or somewhere else.

A package named plainly (``npm install lodash``, ``pip install requests``) comes from the registry in force.
A specifier that names a URL, a git repository, a forge shorthand (``github:user/repo``, npm's ``user/repo``),
a tarball, a ``jsr:``/``npm:`` import, or a folder outside the worktree brings code nobody chose, and its
install scripts run at once: ``unknown``.  So does anything that changes the registry itself (``--registry``,
``--index-url``, ``npm config set registry``), since every later install then comes from there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from vaultops.policy.bash import Word
from vaultops.policy.judge import Judge, names

_REMOTE = re.compile(
    r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|git\+|hg\+|svn\+|bzr\+|git@|git:|github:|gitlab:|bitbucket:|gist:|jsr:|"
    r"npm:|https?:|file:|link:|portal:|patch:|exec:)",
    re.IGNORECASE,
)
# npm reads `user/repo` and `user/repo#ref` as a GitHub repository
_NPM_SHORTHAND = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(?:#\S*)?$")
# PEP 508's direct reference: `name @ https://…`, `name@git+ssh://…`
_DIRECT_REFERENCE = re.compile(
    r"@\s*(?:[A-Za-z][A-Za-z0-9+.-]*://|git\+|git@|git:|file:|github:|gitlab:|bitbucket:|gist:|link:|portal:)",
    re.IGNORECASE,
)
_TARBALL = re.compile(r"\.(?:tgz|tar\.gz|tar|zip|whl|gem|crate)$", re.IGNORECASE)
# Options, any installer's, that name another registry or index.
REGISTRY_OPTIONS = names(
    "--registry --index-url --extra-index-url --index --default-index --find-links --trusted-host --source "
    "--git --extra-index --keyserver"
)


def is_remote_spec(text: str, npm: bool = False) -> bool:
    """Whether a package specifier names code outside the registry (``npm``: also ``user/repo``)."""
    text = text.strip()
    if _REMOTE.match(text) or _DIRECT_REFERENCE.search(text):
        return True
    return npm and not text.startswith(("@", ".", "/", "~")) and bool(_NPM_SHORTHAND.match(text))


def is_path_spec(text: str) -> bool:
    return text.startswith((".", "/", "~")) or _TARBALL.search(text) is not None


def foreign_code(j: Judge, specs: Iterable[Word], npm: bool = False) -> bool:
    """Escalate each specifier that brings code from outside the registry or the worktree; True if any."""
    found = False
    for word in specs:
        text = word.text
        if text.startswith("-") or not text:
            continue
        if word.dynamic:
            j.add("unknown", f"installs {text!r}, a package only known when it runs")
            found = True
        elif is_remote_spec(text, npm):
            j.add("unknown", f"{text}: code from outside the registry, fetched to be installed or run")
            found = True
        elif is_path_spec(text) and any(p.where != "inside" for p in j.places(word)):
            j.add("unknown", f"{text}: code from outside the worktree, to be installed or run")
            found = True
    return found


def registry_options(j: Judge, args: Iterable[Word], options: Iterable[str] = REGISTRY_OPTIONS) -> bool:
    """Escalate an option that points the installer at another registry or index; True if any."""
    wanted = frozenset(options)
    for word in args:
        option = word.text.split("=", 1)[0]
        if option in wanted:
            j.add("unknown", f"{j.cmd.name} {option}: packages from a registry the person did not choose")
            return True
    return False
