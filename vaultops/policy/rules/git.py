"""Rules for git and the forges' CLIs (gh, glab) and trackers: pushes, merges, branches, comments."""

from __future__ import annotations

import posixpath
import re

from vaultops.policy.bash import Word
from vaultops.policy.judge import Judge, flag_value, has, is_remote, names, positionals, register
from vaultops.policy.options import read_options, table
from vaultops.policy.paths import (
    branch_name,
    is_protected,
    is_secret,
)

_GIT_READ = names(
    "status log diff show blame grep describe shortlog rev-parse rev-list ls-files ls-tree cat-file "
    "merge-base name-rev whatchanged show-ref for-each-ref count-objects fsck verify-commit "
    "verify-tag help version var check-ignore check-attr diff-tree diff-files diff-index range-diff "
    "annotate show-branch cherry check-ref-format get-tar-commit-id ls-remote --version --help -h "
    "reflog"
)

_GIT_LOCAL = names(
    "add commit merge rebase cherry-pick revert mv rm switch apply am init notes sparse-checkout "
    "maintenance bundle commit-tree hash-object mktree read-tree write-tree symbolic-ref merge-file "
    "difftool mergetool format-patch fetch pull restore checkout stash branch tag remote submodule "
    "bisect lfs update-index gc repack pack-refs rerere citool gui archive worktree config clone "
    "prune replace update-ref filter-branch filter-repo send-email request-pull push credential "
    "daemon instaweb shell upload-pack receive-pack http-backend reset clean"
)

_GIT_CODE_KEYS = re.compile(
    r"^(core\.(hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|alias\..*|credential\..*|"
    r"filter\..*|diff\..*\.textconv|url\..*|sequence\.editor|gpg\.program|include\..*|includeif\..*)$",
    re.IGNORECASE,
)


# git's own options, before the subcommand
_GIT_GLOBAL = table(
    "-C= -c= -p -P --paginate --no-pager --bare --no-replace-objects --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --version --help -h --html-path "
    "--man-path --info-path --exec-path? --git-dir= --work-tree= --namespace= --super-prefix= "
    "--config-env=! --list-cmds= --attr-source="
)
# -c KEY=VALUE that only change how output looks or who is named
_GIT_SAFE_KEYS = re.compile(
    r"^(color(\..*)?|user\.(name|email)|core\.(quotepath|autocrlf|safecrlf|abbrev|filemode|ignorecase)|"
    r"advice\..*|log\..*|init\.defaultbranch|commit\.gpgsign|tag\.gpgsign|pull\.(rebase|ff)|"
    r"push\.(default|autosetupremote)|safe\.directory|diff\.(noprefix|renames|mnemonicprefix|algorithm|"
    r"context|colormoved)|merge\.conflictstyle|rebase\.autostash|status\.(showuntrackedfiles|short)|"
    r"fetch\.prune|column\.ui|i18n\..*|gc\.auto|maintenance\.auto|versionsort\..*)$",
    re.IGNORECASE,
)
# Options of the subcommands that run a program, write a file or read one: judged as such.
_GIT_RUNS = names(
    "-x --extcmd --tool -t --gui -g --open-files-in-pager -O --upload-pack -u --receive-pack --exec "
    "--ext-diff --template --interactive -i --edit-todo --run --remote"
)
_GIT_RUNS_BY_SUB = {
    "difftool": names("-x --extcmd -t --tool -g --gui --tool-help"),
    "mergetool": names("-t --tool --tool-help -g --gui"),
    "grep": names("-O --open-files-in-pager"),
    "fetch": names("--upload-pack"),
    "pull": names("--upload-pack"),
    "ls-remote": names("--upload-pack -u"),
    "archive": names("--exec --remote"),
    "rebase": names("-x --exec -i --interactive --edit-todo"),
    "log": names("--ext-diff"),
    "show": names("--ext-diff"),
    "diff": names("--ext-diff"),
    "commit": names("--interactive -p --patch"),
    "add": names("-i --interactive -p --patch -e --edit"),
    "help": names("-w --web -i --info"),
}
_GIT_READS_VALUE = names(
    "-F --file -t --template --contents -S --ignore-revs-file --exclude-from --pathspec-from-file"
)
_GIT_WRITES_VALUE = names("--output -o --output-directory")


def _git_sub_options(j: Judge, sub: str, rest: list[Word]) -> None:
    """What a subcommand's options run, write and read; ``--no-index`` makes diff and grep read any path."""
    runs = _GIT_RUNS_BY_SUB.get(sub, frozenset())
    for i, w in enumerate(rest):
        t = w.text
        if t == "--":
            break
        flag, eq, value = t.partition("=")
        short = flag[:2] if re.fullmatch(r"-[A-Za-z]", flag[:2]) and not flag.startswith("--") else ""
        if flag in runs or (short and short in runs and sub in ("difftool", "grep", "rebase")):
            j.add("unknown", f"git {sub} {flag} runs a program of its own")
        nxt = Word(value, w.dynamic) if eq else (rest[i + 1] if i + 1 < len(rest) else None)
        if short in ("-F",) and len(t) > 2 and not eq:
            nxt = Word(t[2:], w.dynamic)
        reads = (flag in _GIT_READS_VALUE or short == "-F") and sub not in ("grep", "log")
        if nxt is not None and reads and (flag not in ("-t", "-S") or sub in ("commit", "tag", "blame")):
            j.read(nxt)
        if (
            nxt is not None
            and flag in _GIT_WRITES_VALUE
            and sub in ("diff", "log", "show", "format-patch", "archive", "bundle", "range-diff")
        ):
            j.write(nxt)
    if sub in ("diff", "grep") and has(rest, "--no-index"):
        for w in positionals(rest, ("-O", "--output", "-U", "--unified", "-e", "-f", "-m", "-A", "-B", "-C"))[
            1 if sub == "grep" else 0 :
        ]:
            j.read(w)


_REMOTE_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")


def _git(j: Judge, args: list[Word]) -> None:
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        opt, eq, value = args[i].text.partition("=")
        if opt.startswith("-c") and len(opt) > 2 and not opt.startswith("--"):  # -ckey=value, one word
            opt, eq, value = "-c", "=", args[i].text[2:]
        step = 1 if eq or opt not in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                                      "--list-cmds", "--attr-source") else 2  # fmt: skip
        read_options(j, "git", args[i : i + step], _GIT_GLOBAL)
        val = Word(value, args[i].dynamic) if eq else (args[i + 1] if i + 1 < len(args) else Word(""))
        if opt == "-C":
            j.with_cwd(val)
        elif opt == "-c" and not _GIT_SAFE_KEYS.match(val.text.split("=")[0]):
            j.add("unknown", f"sets {val.text.split('=')[0]} for this git command, which may run a program")
        elif opt in ("--git-dir", "--work-tree"):
            if any(p.where != "inside" for p in j.places(val)):
                j.add("unknown", f"git {opt} {val.text}: a repository the policy does not see")
        elif opt == "--exec-path" and eq:
            j.add("unknown", "git --exec-path runs git's programs from another folder")
        elif opt in ("--version", "--help", "-h") and not eq:
            j.add("read", "git")
            return
        i += step
    if i >= len(args):
        j.add("read", "git")
        return
    sub, rest = args[i].text, args[i + 1 :]
    words = [w.text for w in rest]
    for w in rest:
        if _REMOTE_HELPER.match(w.text):  # `ext::sh -c …`, `fd::3`: a transport that runs a command
            j.add("unknown", f"{w.text!r} names a git remote helper, which runs a program of its own")
        target = w.text.split(":", 1)[1] if ":" in w.text and "://" not in w.text else w.text
        if target and not target.startswith("-") and is_secret(target):
            what = "stages" if sub == "add" else "reads"
            j.add("read_secrets", f"git {sub} {what} {target}, which holds keys or tokens")
    _git_sub_options(j, sub, rest)
    if sub in ("difftool", "mergetool"):
        j.add("unknown", f"git {sub} runs a diff or merge tool")
        return
    if sub == "var" and has(rest, "-l"):
        j.add("read_secrets", "git var -l lists git's settings, which may hold tokens")
        return
    if sub in _GIT_READ:
        if sub == "reflog" and words[:1] in (["expire"], ["delete"]):
            j.add("delete_tree", "git reflog expire/delete drops history")
        else:
            j.add("read", f"git {sub}")
        return
    if sub not in _GIT_LOCAL:
        j.add("unknown", f"`git {sub}` is not a git command the policy knows (an alias?)")
        return
    elsewhere = j.run_dirs_outside()
    if elsewhere and sub not in ("push", "fetch", "clone", "ls-remote", "lfs"):
        j.add("modify_outside_worktree", f"git {sub} in {elsewhere[0]}, a repository outside the worktree")
    elif elsewhere and sub == "push":
        j.add("push_other_branch", f"pushes from {elsewhere[0]}, a repository outside the worktree")
    _moves_refs(j, sub, rest)
    if sub == "push":
        _git_push(j, rest)
    elif sub == "clone":
        pos = positionals(
            rest,
            names(
                "-b --branch -o --origin --depth -c --config --reference --separate-git-dir -u "
                "--upload-pack -j "
                "--jobs --filter --template --shallow-since --shallow-exclude"
            ),
        )
        if flag_value(rest, "-u", "--upload-pack") is not None or flag_value(rest, "--template") is not None:
            j.add("unknown", "git clone with a command or templates of its own")
        j.add("network_read", "clones a repository")
        if len(pos) >= 2:
            j.write(pos[1], "clones into")
        elif pos:
            name = pos[0].text.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git") or "."
            j.write(Word(name, pos[0].dynamic), "clones into")
    elif sub in ("branch", "tag"):
        _git_branch(j, sub, rest)
    elif sub == "rm" and has(rest, "-r"):
        j.add("delete_tree", "git rm -r deletes a folder's files")
    elif sub == "gc" and any(w.startswith("--prune") for w in words):
        j.add("delete_tree", "git gc --prune drops unreachable commits")
    elif sub == "init":
        _git_init(j, rest)
    elif sub == "bundle" and words[:1] == ["create"]:
        pos = positionals(rest[1:], ("--version",))
        if pos:
            j.write(pos[0])
        j.add("git_local", "git bundle create")
    elif sub == "maintenance" and words[:1] in (["start"], ["register"], ["unregister"], ["stop"]):
        j.add("system_change", f"git maintenance {words[0]} schedules jobs or changes global settings")
    elif sub == "lfs" and words[:1] in (["install"], ["uninstall"], ["update"]):
        j.add("system_change", f"git lfs {words[0]} changes git's global settings and hooks")
    elif sub == "remote" and words[:1] and words[0] not in ("-v", "--verbose", "show", "get-url", "prune"):
        j.add("unknown", f"git remote {words[0]} changes where git fetches and pushes")
    elif sub in ("update-ref", "symbolic-ref"):
        _git_ref(j, sub, rest)
    elif sub == "reset":
        if has(rest, "--hard", "--merge", "--keep"):
            j.add("delete_tree", "git reset --hard discards uncommitted changes")
        else:
            j.add("git_local", "git reset")
    elif sub == "clean":
        if has(rest, "-n", "--dry-run"):
            j.add("read", "git clean --dry-run")
        else:
            j.add("delete_tree", "git clean deletes untracked files")
    elif sub == "read-tree" and has(rest, "-u", "--reset") and not has(rest, "-n", "--dry-run"):
        j.add("delete_tree", "git read-tree -u/--reset overwrites the worktree's files, discarding changes")
    elif _discards(sub, rest):
        j.add("delete_tree", f"git {sub} discards uncommitted changes")
    elif sub in ("apply", "am") and _applies_outside(j, sub, rest):
        pass
    elif sub == "stash" and words[:1] in (["drop"], ["clear"]):
        j.add("delete_tree", f"git stash {words[0]} drops saved work")
    elif sub == "worktree":
        action = words[0] if words else "list"
        if action == "add":
            pos = positionals(rest[1:], ("-b", "-B", "--reason"))
            parent = posixpath.dirname(j.scope.real_workdir)
            # beside the worktree (``../wt-fix``) is where worktrees go; anywhere else is a write there
            if pos and any(posixpath.dirname(p.path) != parent for p in j.places(pos[0])):
                j.write(pos[0], "creates a worktree in")
            j.add("create_worktree", "creates a worktree")
        elif action in ("remove", "prune"):
            j.add("delete_tree", f"git worktree {action}")
        elif action == "list":
            j.add("read", "git worktree list")
        else:
            j.add("git_local", f"git worktree {action}")
    elif sub == "config":
        _git_config(j, rest)
    elif sub in ("filter-branch", "filter-repo", "replace", "prune"):
        j.add("delete_tree", f"git {sub} rewrites or drops history")
    elif sub in ("send-email", "request-pull"):
        j.add("message_external", f"git {sub} sends mail")
    elif sub in ("submodule", "bisect", "rebase") and (
        (sub == "submodule" and "foreach" in words)
        or (sub == "bisect" and "run" in words)
        or (sub == "rebase" and (has(rest, "-x", "--exec")))
    ):
        j.add("unknown", f"git {sub} runs a command of its own")
    elif sub in ("credential", "daemon", "instaweb", "shell", "upload-pack", "receive-pack", "http-backend"):
        j.add("unknown", f"git {sub}")
    elif sub == "lfs" and words[:1] == ["push"]:
        j.add("push_other_branch", "git lfs push uploads objects")
    elif sub == "archive":
        out = flag_value(rest, "-o", "--output")
        if out is not None:
            j.write(out)
        j.add("read", "git archive")
    else:
        j.add("git_local", f"git {sub}")


# A pathspec that names many files at once: the whole tree, a folder, a glob, pathspec magic.
_WIDE_PATHSPEC = re.compile(r"^(?:\.{1,2}/?|:/?|/|\*.*|.*[*?\[].*|:\(.*|.*/|:!.*|:\^.*)$")
_CHECKOUT_VALUES = names("-b -B --orphan --conflict --pathspec-from-file -s --source --inter-hunk-context -U")


def _discards(sub: str, rest: list[Word]) -> bool:
    """``git restore [--source=…] [--worktree] -- .``, ``git checkout [REV] -- src/``, ``git checkout -f``,
    ``git switch --discard-changes``: uncommitted changes to many files are gone, with no copy kept."""
    if sub == "switch":
        return has(rest, "--discard-changes", "-f", "--force")
    if sub not in ("checkout", "restore") or has(rest, "-b", "-B", "--orphan", "-p", "--patch"):
        return False
    if sub == "restore" and has(rest, "--staged", "-S") and not has(rest, "--worktree", "-W"):
        return False  # only unstages: the files keep their changes
    if sub == "checkout" and has(rest, "-f", "--force"):
        return True
    if has(rest, "--pathspec-from-file"):
        return True
    texts = [w.text for w in rest]
    after = texts[texts.index("--") + 1 :] if "--" in texts else []
    paths = after or [w.text for w in positionals(rest, _CHECKOUT_VALUES)][1 if sub == "checkout" else 0 :]
    if sub == "checkout" and not after and len(paths) == 0:
        return "." in texts
    return any(w.dynamic for w in rest) or any(_WIDE_PATHSPEC.match(p) for p in paths)


def _applies_outside(j: Judge, sub: str, rest: list[Word]) -> bool:
    """``git apply --unsafe-paths`` writes wherever the patch says; ``--directory=DIR`` puts every path of the
    patch under DIR.  Judged as writes; True when anything was found."""
    found = False
    if has(rest, "--unsafe-paths"):
        j.add(
            "modify_outside_worktree",
            f"git {sub} --unsafe-paths writes wherever the patch names, outside too",
        )
        found = True
    directory = flag_value(rest, "--directory")
    if directory is not None:
        j.write(directory, f"git {sub} --directory writes the patch's files under")
        found = True
    if found:
        j.add("git_local", f"git {sub}")
    return found


_BRANCH_MOVES = ("-m", "-M", "-f", "-c", "-C", "--force", "--move", "--copy")
# subcommands that move the branch checked out (reset only when given a commit other than HEAD)
_MOVES_CURRENT = names("commit merge rebase cherry-pick revert am pull reset")
_FETCH_TAKES = names(
    "--depth --deepen --shallow-since --shallow-exclude --refmap --recurse-submodules-default -j --jobs "
    "--negotiation-tip --server-option -o --filter --upload-pack"
)


def writes_ref(j: Judge, ref: Word, forced: bool, how: str) -> None:
    """``how`` writes the ref ``ref`` of this repository: every way of moving a branch is judged by where
    it lands.  A protected branch is the person's (``merge_pr``); the job's own branch is its own;
    another branch, overwritten (``+src:dst``, ``-f``, ``-B``, ``update-ref``), loses its commits, as
    deleting it would; a remote-tracking ref written by hand fakes what a remote holds, and cleanup reads
    those to know what was pushed."""
    text = ref.text
    if ref.dynamic:
        j.add("unknown", f"{how} {text!r}, a ref only known when it runs")
        return
    name = branch_name(text)
    if text.startswith("refs/") and not text.startswith("refs/heads/"):
        if text.startswith("refs/tags/"):
            j.add("delete_branch" if forced else "git_local", f"{how} the tag {text}")
        else:
            j.add("unknown", f"{how} {text}, a ref that is not a branch or a tag")
        return
    if name in ("HEAD", "@"):
        name = j.scope.current_branch or ""
    if not name or is_protected(name):
        j.add("merge_pr", f"{how} {name or 'a branch not known'}, a protected branch")
    elif forced and name != j.scope.own_branch:
        j.add("delete_branch", f"{how} {name} by force, which drops its commits; it is not the job's branch")


def _moves_refs(j: Judge, sub: str, rest: list[Word]) -> None:
    """The refs a subcommand writes besides the files it changes."""
    words = [w.text for w in rest]
    current = j.scope.current_branch or ""
    if sub in _MOVES_CURRENT and is_protected(current):
        pos = positionals(rest, ("-m", "-F", "-C", "-c", "--message", "--file", "-s", "-X", "--strategy"))
        if sub != "reset" or (pos[:1] and pos[0].text not in ("HEAD", "@")) or has(rest, "--soft", "--hard"):
            j.add("merge_pr", f"git {sub} moves {current}, the protected branch checked out")
    if sub in ("fetch", "pull"):
        for spec in positionals(rest, _FETCH_TAKES)[1:]:
            _, colon, dst = spec.text.removeprefix("+").partition(":")
            forced = spec.text.startswith("+") or has(rest, "-f", "--force")
            if colon and dst and not spec.text.startswith("^"):
                writes_ref(j, Word(dst, spec.dynamic), forced, f"git {sub} writes")
        if (refmap := flag_value(rest, "--refmap")) is not None and refmap.text:
            j.add("unknown", f"git {sub} --refmap chooses the refs it writes")
    elif sub in ("checkout", "switch"):
        for flag in ("-B", "-C", "--force-create"):
            made = flag_value(rest, flag)
            if made is not None:
                writes_ref(j, made, True, f"git {sub} {flag} resets")
        if has(rest, "--ignore-other-worktrees"):
            j.add("merge_pr", f"git {sub} --ignore-other-worktrees takes a branch checked out elsewhere")
    elif sub == "rebase":
        pos = positionals(rest, ("--onto", "-s", "--strategy", "-X", "--strategy-option", "-x", "--exec"))
        if len(pos) >= 2:
            writes_ref(j, pos[1], True, "git rebase rewrites")
    elif sub == "worktree" and words[:1] == ["add"]:
        made = flag_value(rest[1:], "-B")
        if made is not None:
            writes_ref(j, made, True, "git worktree add -B resets")


def _git_branch(j: Judge, sub: str, rest: list[Word]) -> None:
    """Deleting a branch or tag is ``delete_branch``; moving, copying or forcing one onto a protected branch
    (``git branch -f main HEAD~3``, ``git branch -M main``) is the person's call."""
    if has(rest, "-d", "-D", "--delete"):
        j.add("delete_branch", f"deletes a {sub}")
        return
    takes = ["--set-upstream-to", "-u", "--contains", "--no-contains", "--points-at", "--format", "--sort",
             "--merged", "--no-merged"]  # fmt: skip
    pos = positionals(rest, takes + (["-m", "-F", "--message", "--file"] if sub == "tag" else []))
    if sub == "branch" and has(rest, *_BRANCH_MOVES):
        if any(w.dynamic or is_protected(w.text) for w in pos):
            shown = " ".join(w.text for w in pos)
            j.add("merge_pr", f"git branch moves, copies or resets a protected branch ({shown})")
            return
        if has(rest, "-m", "-M", "--move") and len(pos) < 2 and is_protected(j.scope.current_branch or ""):
            j.add("merge_pr", "git branch renames a protected branch")
            return
        moving = has(rest, "-m", "-M", "--move")
        renamed = pos[0].text if moving and len(pos) == 2 else j.scope.current_branch
        if moving and renamed == j.scope.own_branch:
            j.add("delete_branch", f"git branch renames {renamed}, the job's branch, away")
            return
        forced = has(rest, "-f", "--force", "-C", "-M")
        renaming = has(rest, "-m", "-M", "-c", "-C", "--move", "--copy")
        written = pos[-1] if pos and renaming else (pos[0] if pos else None)
        if written is not None and forced:
            writes_ref(j, written, True, "git branch writes")
    if sub == "tag" and has(rest, "-f", "--force"):
        j.add("delete_branch", "git tag -f moves an existing tag")
        return
    j.add("git_local", f"git {sub}")


def _git_ref(j: Judge, sub: str, rest: list[Word]) -> None:
    """``update-ref`` and ``symbolic-ref`` move refs by hand: a protected branch is the person's call."""
    if has(rest, "-d", "--delete"):
        j.add("delete_branch", f"git {sub} -d deletes a ref")
        return
    if has(rest, "--stdin"):
        j.add("unknown", f"git {sub} --stdin moves refs read from its input")
        return
    pos = positionals(rest, ("-m",))
    if sub == "symbolic-ref" and len(pos) < 2:
        j.add("read", "git symbolic-ref")
        return
    names_ = [w.text for w in pos]
    if any(w.dynamic for w in pos) or any(is_protected(n.removeprefix("refs/heads/")) for n in names_[:1]):
        j.add("merge_pr", f"git {sub} moves a protected branch ({' '.join(names_)})")
    elif names_[:1] == ["HEAD"] and sub == "symbolic-ref":
        if len(names_) > 1 and is_protected(names_[1]):
            j.add("merge_pr", f"git symbolic-ref HEAD checks out {names_[1]}, a protected branch, unseen")
        else:
            j.add("git_local", "git symbolic-ref HEAD switches the checked-out branch")
    elif names_[:1] == ["HEAD"] and is_protected(j.scope.current_branch or ""):
        j.add("merge_pr", "git update-ref HEAD moves the protected branch checked out")
    elif names_ and not names_[0].startswith("refs/heads/") and names_[0] != "HEAD":
        j.add("unknown", f"git {sub} {names_[0]}: a ref that is not a branch")
    elif names_ and names_[0] != "HEAD" and sub == "update-ref":
        writes_ref(j, pos[0], True, "git update-ref writes")
        j.add("git_local", f"git {sub}")
    else:
        j.add("git_local", f"git {sub}")


def _git_init(j: Judge, rest: list[Word]) -> None:
    if has(rest, "--template") or flag_value(rest, "--template") is not None:
        j.add("unknown", "git init --template copies hooks of its own")
    for flag in ("--separate-git-dir",):
        value = flag_value(rest, flag)
        if value is not None:
            j.write(value, "creates a repository in")
    pos = positionals(rest, ("-b", "--initial-branch", "--object-format", "--ref-format", "--shared",
                             "--separate-git-dir", "--template"))  # fmt: skip
    j.write(pos[0] if pos else Word("."), "creates a repository in")
    j.add("git_local", "git init")


def _git_config(j: Judge, rest: list[Word]) -> None:
    reading = has(
        rest,
        "--get",
        "--get-all",
        "--get-regexp",
        "-l",
        "--list",
        "--show-origin",
        "--get-urlmatch",
        "--show-scope",
        "--name-only",
    ) or (len(positionals(rest, ("-f", "--file"))) == 1 and not has(rest, "--unset", "--unset-all"))
    if has(rest, "-l", "--list", "--get-regexp", "--get-urlmatch") or (rest and rest[0].text == "list"):
        j.add("read_secrets", "lists git's settings, which may hold tokens (remote URLs, credentials)")
        return
    if reading or not rest or (rest and rest[0].text == "get"):
        j.add("read", "git config")
        return
    if has(rest, "--global", "--system") or flag_value(rest, "-f", "--file") is not None:
        target = flag_value(rest, "-f", "--file")
        if target is not None:
            j.write(target)
        else:
            j.add("modify_outside_worktree", "changes git's global settings")
        return
    pos = positionals(rest, ("-f", "--file", "--type", "--default"))
    key = (
        pos[1].text
        if pos and pos[0].text in ("set", "unset") and len(pos) > 1
        else (pos[0].text if pos else "")
    )
    if _GIT_CODE_KEYS.match(key):
        j.add("modify_policy", f"sets {key}, which makes git run a program")
    elif not key or not _GIT_SAFE_KEYS.match(key) or any(w.dynamic for w in pos[:2]):
        j.add("unknown", f"git config {key}: a setting the policy does not know to be harmless")
    # A worktree shares its repository's config (and --worktree's lives in the repository too): every
    # write lands outside the worktree, for every other worktree and the person's own checkout.
    j.add(
        "modify_outside_worktree", f"git config {key} writes the repository's config, shared by its worktrees"
    )


def _git_push(j: Judge, rest: list[Word]) -> None:
    if has(rest, "-n", "--dry-run"):
        j.add("read", "git push --dry-run")
        return
    scope = j.scope
    if has(rest, "-f", "--force", "--force-with-lease", "--force-if-includes"):
        j.add("merge_pr", "force-pushes (rewrites the remote's history)")
    if has(rest, "--mirror", "--all", "--branches"):
        j.add("merge_pr", "pushes every branch, main included")
    if has(rest, "--prune"):
        j.add("delete_branch", "deletes remote branches (--prune)")
    if has(rest, "--tags", "--follow-tags"):
        j.add("push_other_branch", "pushes tags (releases may follow)")
    deleting = has(rest, "-d", "--delete")
    pos = positionals(rest, ("--repo", "-o", "--push-option", "--receive-pack", "--exec", "--signed"))
    if flag_value(rest, "--receive-pack", "--exec") is not None:
        j.add("unknown", "git push with a command of its own on the other side")
    if pos and (is_remote(pos[0].text) or pos[0].text.startswith(("/", "./", "../", "~"))):
        j.add("push_other_branch", f"pushes to {pos[0].text}, a remote given by URL or path")
    refspecs = pos[1:]
    if not refspecs:
        refspecs = [Word(scope.current_branch or "")] if not deleting else []
    for spec in refspecs:
        text = spec.text
        if spec.dynamic:
            j.add("unknown", f"pushes {text!r}, a branch only known when it runs")
            continue
        if text.startswith("+"):
            j.add("merge_pr", f"force-pushes {text}")
            text = text[1:]
        src, colon, dst = text.partition(":")
        if colon and not src:
            j.add("delete_branch", f"deletes the remote branch {dst}")
            continue
        target = branch_name(dst if colon else src)
        if target == "HEAD" or not target:
            target = scope.current_branch or ""
        if deleting:
            j.add("delete_branch", f"deletes the remote branch {target}")
        elif target.startswith("refs/tags/"):
            j.add("push_other_branch", f"pushes the tag {target}")
        elif not target:
            j.add("push_other_branch", "pushes the checked-out branch, which is not known")
        elif is_protected(target):
            j.add("merge_pr", f"pushes to {target}")
        elif scope.own_branch is not None and target == scope.own_branch:
            j.add("push_own_branch", f"pushes to {target}, the worker's own branch")
        else:
            j.add("push_other_branch", f"pushes to {target}, which is not the worker's own branch")


def _forge(j: Judge, args: list[Word]) -> None:
    """gh (GitHub) and glab (GitLab): pull/merge requests, issues, releases, the API."""
    pos = positionals(
        args,
        names(
            "-R --repo -b --body -t --title -B --base -H --head -F --body-file -l --label -a --assignee -r "
            "--reviewer -m --milestone -X --method -f --field --raw-field -q --jq --json -L --limit -s "
            "--state --input -p --template -S --search --hostname -h"
        ),
    )
    words = [w.text for w in pos]
    group = words[0] if words else ""
    sub = words[1] if len(words) > 1 else ""
    group = "pr" if group == "mr" else group
    name = j.cmd.name
    if has(args, "--version") or group in ("", "help", "version", "completion", "--help"):
        j.add("read", name)
    elif group == "pr":
        if sub == "merge":
            j.add("merge_pr", f"{name} {words[0]} merge merges a pull request")
        elif sub == "create":
            if has(args, "-d", "--draft"):
                j.add("open_draft_pr", "opens a draft pull request")
            else:
                j.add("open_pr", "opens a pull request for review (not a draft)")
        elif sub in ("ready", "update") and not has(args, "--undo"):
            j.add("open_pr", f"marks a pull request ready ({sub})")
        elif sub in ("view", "list", "status", "diff", "checks", "show"):
            j.add("network_read", f"{name} pr {sub}")
        elif sub == "checkout":
            j.add("git_local", "checks a pull request out")
        else:
            j.add("comment_external", f"{name} pr {sub} changes a pull request")
    elif group == "issue":
        if sub in ("view", "list", "status", "show"):
            j.add("network_read", f"{name} issue {sub}")
        else:
            j.add("comment_external", f"{name} issue {sub} changes an issue")
    elif group == "api":
        _forge_api(j, args, words[1:])
    elif group == "release":
        if sub in ("view", "list", "download"):
            j.add("network_read", f"{name} release {sub}")
        else:
            j.add("deploy", f"{name} release {sub}")
    elif group == "auth":
        j.add("read" if sub == "status" else "key_rotation", f"{name} auth {sub}")
    elif group in ("secret", "variable", "ssh-key", "gpg-key", "token"):
        j.add("read" if sub == "list" else "key_rotation", f"{name} {group} {sub}")
    elif group in ("run", "workflow", "ci", "pipeline", "job"):
        if sub in ("view", "list", "watch", "download", "status", "get", "trace", "lint"):
            j.add("network_read", f"{name} {group} {sub}")
        else:
            j.add("network_write", f"{name} {group} {sub} starts or changes CI")
    elif group == "repo":
        if sub in ("view", "list"):
            j.add("network_read", f"{name} repo {sub}")
        elif sub == "clone":
            j.add("network_read", "clones a repository")
            if len(pos) > 3:
                j.write(pos[3], "clones into")
        else:
            j.add("unknown", f"{name} repo {sub} changes a repository's settings")
    elif group in ("browse", "status", "search"):
        j.add("network_read", f"{name} {group}")
    elif group in ("label", "project", "gist", "snippet"):
        if sub in ("view", "list"):
            j.add("network_read", f"{name} {group} {sub}")
        else:
            j.add("comment_external", f"{name} {group} {sub}")
    else:
        j.add("unknown", f"`{name} {group}` is not a {name} command the policy knows")


def _forge_api(j: Judge, args: list[Word], rest: list[str]) -> None:
    method_word = flag_value(args, "-X", "--method")
    fields = any(flag_value(args, f) is not None for f in ("-f", "-F", "--field", "--raw-field", "--input"))
    method = method_word.text.upper() if method_word else ("POST" if fields else "GET")
    path = rest[0] if rest else ""
    if path == "graphql":
        text = " ".join(w.text for w in args)
        if re.search(r"\bmutation\b", text):
            if re.search(r"merge(PullRequest|Branch)", text, re.IGNORECASE):
                j.add("merge_pr", "merges through the GraphQL API")
            else:
                j.add("comment_external", "changes GitHub through the GraphQL API")
        else:
            j.add("network_read", "queries the GraphQL API")
        return
    if method in ("GET", "HEAD"):
        j.add("network_read", f"{method} {path}")
    elif re.search(r"pulls/\d+/merge|/merges\b|merge_requests/\d+/merge", path):
        j.add("merge_pr", f"{method} {path} merges")
    elif method == "DELETE" and "git/refs" in path:
        j.add("delete_branch", f"DELETE {path}")
    elif re.search(r"/(issues|pulls|comments|reviews|labels|assignees|merge_requests|notes)\b", path):
        j.add("comment_external", f"{method} {path}")
    else:
        j.add("network_write", f"{method} {path} changes something through the API")


def _tracker(j: Judge, args: list[Word]) -> None:
    pos = [w.text for w in positionals(args)]
    if pos and pos[0] in names("list view get show search me whoami status --help help"):
        j.add("network_read", f"{j.cmd.name} {pos[0]}")
    else:
        j.add("comment_external", f"{j.cmd.name} changes an external tracker")


register("git", _git)
register("gh glab", _forge)
register("jira acli asana linear clickup trello", _tracker)
