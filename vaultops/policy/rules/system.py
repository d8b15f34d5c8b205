"""Rules for programs that change the machine or reach beyond it: services, packages, users, keys,
payments, databases, clouds, processes, privileges."""

from __future__ import annotations

from collections.abc import Iterable

from vaultops.policy.bash import Word
from vaultops.policy.judge import (
    Handler,
    Judge,
    action,
    flag_value,
    has,
    names,
    positionals,
    register,
    runs_its_own,
)


def _reads_or(reading: Iterable[str]) -> Handler:
    """Read-only for the subcommands (or flags) in ``reading`` ("" for none at all), else a system change."""
    reading = frozenset(reading)

    def rule(j: Judge, args: list[Word]) -> None:
        pos = [w.text for w in positionals(args, ("-H", "--host", "-M", "--machine", "-o", "--output"))]
        sub = pos[0] if pos else ""
        if sub in reading or any(a.text in reading for a in args if a.text.startswith("-")):
            j.add("read", f"{j.cmd.name} {sub}".strip())
        else:
            j.add("system_change", f"{j.cmd.name} {sub} changes the system".replace("  ", " "))

    return rule


def _ip(j: Judge, args: list[Word]) -> None:
    changing = names("add del delete set change replace flush up down append prepend")
    if any(w.text in changing for w in args) or (j.cmd.name == "ifconfig" and len(positionals(args)) > 1):
        j.add("system_change", "changes the network setup")
    else:
        j.add("read", j.cmd.name)


def _kill(j: Judge, args: list[Word]) -> None:
    if any(a.text in ("-0", "-l", "-L", "--list") for a in args) or not args:
        j.add("read", "checks a process")
    else:
        j.add("kill_process", "signals or kills processes")


def _crontab(j: Judge, args: list[Word]) -> None:
    j.add("read" if has(args, "-l") and not has(args, "-r", "-e") else "system_change", "crontab")


def _sysctl(j: Judge, args: list[Word]) -> None:
    if has(args, "-w", "--write", "-p", "--load", "--system") or any("=" in w.text for w in args):
        j.add("system_change", "changes kernel settings")
    else:
        j.add("read", "sysctl")


def _stripe(j: Judge, args: list[Word]) -> None:
    pos = [
        w.text
        for w in positionals(
            args,
            names("--api-key -p --project-name -d --data -e --expand --stripe-account --color --log-level"),
        )
    ]
    if not pos or pos[0] in ("help", "version", "completion") or has(args, "--version", "-v", "--help", "-h"):
        j.add("read", "stripe")
    elif pos[0] in ("listen", "logs", "status", "open", "samples", "fixtures") or (
        len(pos) > 1 and pos[-1] in ("list", "retrieve", "search")
    ):
        j.add("network_read" if pos[0] != "fixtures" else "payment", f"stripe {' '.join(pos[:2])}")
    elif pos[0] == "login" or pos[0] == "logout":
        j.add("key_rotation", f"stripe {pos[0]}")
    else:
        j.add("payment", f"stripe {' '.join(pos[:3])} changes the Stripe account")


def _gpg(j: Judge, args: list[Word]) -> None:
    if has(
        args,
        "--gen-key",
        "--full-generate-key",
        "--full-gen-key",
        "--quick-gen-key",
        "--quick-generate-key",
        "--delete-key",
        "--delete-keys",
        "--delete-secret-keys",
        "--delete-secret-key",
        "--import",
        "--export-secret-keys",
        "--export-secret-subkeys",
        "--edit-key",
        "--quick-add-key",
        "--gen-revoke",
        "--send-keys",
        "--change-passphrase",
        "--passwd",
    ):
        j.add("key_rotation", "gpg changes or exports keys")
    elif has(args, "-d", "--decrypt"):
        j.add("read_secrets", "gpg decrypts")
    else:
        j.add("read", "gpg")


def _openssl(j: Judge, args: list[Word]) -> None:
    sub = args[0].text if args else ""
    if sub in ("genrsa", "genpkey", "req", "ecparam", "gendsa", "ca", "x509") and has(
        args, "-new", "-out", "-genkey", "-newkey"
    ):
        j.add("key_rotation", f"openssl {sub} makes keys or certificates")
    elif sub in ("genrsa", "genpkey", "gendsa"):
        j.add("key_rotation", f"openssl {sub} makes a key")
    else:
        out = flag_value(args, "-out")
        if out is not None:
            j.write(out)
        j.add("read", f"openssl {sub}")


def _cloud(j: Judge, args: list[Word]) -> None:
    words = [w.text for w in args]
    if not words or words[:1] in (["--version"], ["version"], ["-v"], ["help"], ["--help"]):
        j.add("read", j.cmd.name)
    else:
        j.add("deploy", f"{j.cmd.name} {' '.join(words[:2])} acts on cloud or cluster resources")


def _terraform(j: Judge, args: list[Word]) -> None:
    pos = [w.text for w in positionals(args, ("-chdir", "-var", "-var-file", "-target", "-out"))]
    sub = pos[0] if pos else ""
    if sub in (
        "plan",
        "validate",
        "fmt",
        "init",
        "show",
        "output",
        "providers",
        "graph",
        "version",
        "get",
        "preview",
        "test",
        "console",
        "",
    ):
        j.add("run_build", f"{j.cmd.name} {sub}".strip())
    else:
        j.add("deploy", f"{j.cmd.name} {sub} changes infrastructure")


def _privileged(j: Judge, args: list[Word]) -> None:
    j.add("privileged", f"{j.cmd.name} runs commands as another user")


def _hostname(j: Judge, args: list[Word]) -> None:
    pos = positionals(args)
    j.add("system_change" if pos else "read", "sets the host name" if pos else "hostname")


def _database(j: Judge, args: list[Word]) -> None:
    j.add("database", f"{j.cmd.name} talks to a database")


def _migrations(reads: Iterable[str]) -> Handler:
    reads = frozenset(reads)

    def rule(j: Judge, args: list[Word]) -> None:
        words = [w.text for w in positionals(args, ("-c", "--config", "-x", "-n", "--name"))]
        if words and words[0] in reads:
            j.add("read", f"{j.cmd.name} {words[0]}")
        else:
            j.add("database", f"{j.cmd.name} {' '.join(words[:2])} changes the database")

    return rule


def _prisma(j: Judge, args: list[Word]) -> None:
    words = [w.text for w in positionals(args, ("--schema", "--name"))]
    if words[:1] in (["migrate"], ["db"]) and words[1:2] not in (["status"], ["diff"]):
        j.add("database", f"prisma {' '.join(words[:2])} changes the database")
    else:
        j.add("run_build", f"prisma {' '.join(words[:2])}".strip())


register(
    "mail mailx sendmail mutt neomutt msmtp swaks ssmtp twilio telegram-send apprise slack-cli",
    action("message_external", "sends a message"),
)
register("stripe", _stripe)
register("ssh-keygen ssh-add ssh-copy-id age-keygen certbot", action("key_rotation", "creates or loads keys"))
register("gpg gpg2", _gpg)
register("openssl", _openssl)
register("security pass op bw vault keyring secret-tool", action("read_secrets", "reads a secret store"))
register(
    "systemctl",
    _reads_or(
        names(
            "status is-active is-enabled is-failed list-units list-unit-files list-timers list-sockets show "
            "cat --version help list-dependencies"
        )
    ),
)
register(
    "launchctl",
    _reads_or(names("list print print-disabled blame help version dumpstate managerpid manageruid")),
)
register(
    "service",
    lambda j, a: j.add(
        "read" if any(w.text in ("status", "--status-all") for w in a) else "system_change", "service"
    ),
)
register(
    "brew",
    _reads_or(
        (
            "list",
            "ls",
            "info",
            "search",
            "outdated",
            "deps",
            "uses",
            "config",
            "doctor",
            "--version",
            "--prefix",
            "leaves",
            "desc",
            "home",
            "",
        )
    ),
)
register(
    "apt apt-get aptitude apt-cache dpkg yum dnf rpm pacman apk zypper snap flatpak port nix-env pkg emerge",
    _reads_or(
        (
            "list",
            "show",
            "search",
            "info",
            "policy",
            "-l",
            "-L",
            "-q",
            "-Q",
            "-s",
            "-Ss",
            "-Qi",
            "--list",
            "--search",
            "query",
            "madison",
            "depends",
            "rdepends",
            "",
        )
    ),
)
register(
    "shutdown reboot halt poweroff init telinit mount umount fdisk parted mkfs mkfs.ext4 mkfs.xfs mkswap "
    "swapon swapoff losetup cryptsetup useradd userdel usermod groupadd groupdel passwd chpasswd chsh "
    "adduser deluser visudo dscl iptables ip6tables nft ufw firewall-cmd pfctl modprobe insmod rmmod "
    "ldconfig update-alternatives chroot scutil nvram csrutil spctl tmutil hostnamectl timedatectl "
    "localectl at batch atrm systemd-run kextload diskutil",
    action("system_change", "changes the system"),
)
register("sysctl", _sysctl)
register("defaults", _reads_or(("read", "domains", "find", "read-type", "export")))
register("ip ifconfig", _ip)
register("hostname", _hostname)
register("crontab", _crontab)
register("kill pkill killall xkill", _kill)
register("sudo doas su pkexec runuser", _privileged)
register(
    "psql mysql mariadb sqlite3 mongo mongosh redis-cli cqlsh clickhouse-client sqlcmd duckdb pg_dump "
    "pg_restore mysqldump dropdb createdb",
    _database,
)
register("alembic", _migrations(("current", "history", "heads", "branches", "show", "check")))
register("flyway liquibase dbmate goose migrate knex sequelize", _migrations(("info", "status", "validate")))
register("prisma", _prisma)
register(
    "aws gcloud gsutil az kubectl helm kustomize pulumi fly flyctl heroku vercel netlify firebase wrangler "
    "serverless sls doctl linode-cli hcloud ansible ansible-playbook eb cdk sam twine railway render "
    "oc eksctl",
    _cloud,
)
register("terraform tofu terragrunt", _terraform)
register("parallel", runs_its_own("parallel"))
register("ssh-agent", action("key_rotation", "starts an agent that holds keys"))
