"""Cloud metadata and link-local addresses: ``http://169.254.169.254/`` hands out the machine's credentials.

They are never fetched, however they are spelled: decimal (``2852039166``), hex (``0xa9fea9fe``), octal
(``0251.0376.0251.0376``), short forms (``169.254.43518``), IPv6 (``[::ffff:169.254.169.254]``,
``[fd00:ec2::254]``, ``[fe80::1]``), percent-encoded or full-width characters, a trailing dot, userinfo in
front (``http://x@169.254.169.254/``), or a name that resolves there (``metadata.google.internal``,
``169.254.169.254.nip.io``).
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
import urllib.parse

_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.internal",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
    }
)
# link-local (AWS, GCP, Azure IMDS, …), Alibaba, Azure's WireServer, Oracle's second address
_V4_NETS = tuple(
    ipaddress.ip_network(n)
    for n in ("169.254.0.0/16", "100.100.100.200/32", "168.63.129.16/32", "192.0.0.192/32")
)
_V6_NETS = (ipaddress.ip_network("fe80::/10"), ipaddress.ip_network("fd00:ec2::/32"))
# "169.254.169.254.nip.io", "169-254-169-254.sslip.io", "a9fea9fe.nip.io": names made to resolve there
_EMBEDDED = re.compile(
    r"(^|[.-])(169[.-]254[.-]\d+[.-]\d+|a9fe[0-9a-f]{4}|100[.-]100[.-]100[.-]200|168[.-]63[.-]129[.-]16|"
    r"a83f8110|192[.-]0[.-]0[.-]192|c00000c0)([.-]|$)"
)
_URL = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+|(?:https?|ftps?|wss?|gopher|dict|file|telnet):[/\\]+[^\s'\"<>`]+",
    re.I,
)
_WEB_SCHEME = re.compile(r"^(?:https?|ftps?|wss?|gopher|dict|file|telnet):/", re.I)


def _ipv4(text: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in any form ``inet_aton`` accepts: 1 to 4 parts, each decimal, octal or hex."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    nums: list[int] = []
    for part in parts:
        try:
            if re.fullmatch(r"0[xX][0-9a-fA-F]*", part):
                nums.append(int(part[2:] or "0", 16))
            elif re.fullmatch(r"0[0-7]+", part):
                nums.append(int(part, 8))
            elif re.fullmatch(r"\d+", part):
                nums.append(int(part))
            else:
                return None
        except ValueError:
            return None
    value = 0
    for num in nums[:-1]:
        if num > 255:
            return None
        value = value * 256 + num
    room = 4 - len(nums) + 1
    if nums[-1] >= 256**room:
        return None
    value = value * 256**room + nums[-1]
    return ipaddress.IPv4Address(value)


def _ip_is_metadata(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        mapped = ip.ipv4_mapped or ip.sixtofour
        if mapped is not None:
            return _ip_is_metadata(mapped)
        packed = int(ip)
        # ::169.254.169.254 (IPv4-compatible) and 64:ff9b::a9fe:a9fe (NAT64) carry an IPv4 address too
        if (packed >> 32 == 0 and packed > 0xFFFF) or packed >> 32 == 0x0064FF9B0000000000000000:
            return _ip_is_metadata(ipaddress.IPv4Address(packed & 0xFFFFFFFF))
        return any(ip in net for net in _V6_NETS)
    return any(ip in net for net in _V4_NETS)


def normal_host(host: str) -> str:
    """A host as a resolver reads it: percent-decoded, NFKC (full-width digits and dots), lower case, no
    trailing dots, no brackets, no zone."""
    host = urllib.parse.unquote(host)
    host = unicodedata.normalize("NFKC", host).replace("。", ".").replace("｡", ".")
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and "]" in host:
        host = host[1 : host.index("]")]
    return host.split("%", 1)[0] if ":" in host else host


def is_metadata_host(host: str) -> bool:
    host = normal_host(host)
    if not host:
        return False
    if host in _NAMES or _EMBEDDED.search(host):
        return True
    if ":" in host:
        try:
            return _ip_is_metadata(ipaddress.IPv6Address(host))
        except ValueError:
            return False
    v4 = _ipv4(host)
    return v4 is not None and _ip_is_metadata(v4)


def url_host(url: str) -> str:
    """The host of a URL or ``[user@]host[:port][/path]``: after the last ``@`` of the authority."""
    text = url.strip()
    text = text.replace("\\", "/")
    if "://" in text[:40] or _WEB_SCHEME.match(text):  # http:/host and http:\\host reach the host too
        text = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*:/+", "", text)
    authority = re.split(r"[/?#]", text, maxsplit=1)[0]
    authority = authority.rsplit("@", 1)[-1]
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    if authority.count(":") > 1:  # a bare IPv6 address
        return authority
    return authority.split(":", 1)[0]


def metadata_targets(text: str, bare: bool = False) -> list[str]:
    """The metadata addresses ``text`` names: in any URL within it, or (``bare``) as a host itself."""
    found = [u for u in _URL.findall(text) if is_metadata_host(url_host(u))]
    if bare and not found and text and is_metadata_host(url_host(text)):
        found.append(text)
    return found


# --- servers: an address a program listens on ---------------------------------------------------------------

_BIND_OPTION = re.compile(
    r"^--?(?:[\w.-]*(?:host|bind|listen|addr|address|interface)[\w.-]*|ip|b|H|h|a|S|l|L)$", re.IGNORECASE
)
_ALL_INTERFACES = frozenset({"0.0.0.0", "::", "*", "0", "[::]", "any", "all"})


def _is_loopback(host: str) -> bool:
    host = normal_host(host)
    if host in ("localhost", "ip6-localhost", "ip6-loopback") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        v4 = _ipv4(host)
        return v4 is not None and v4.is_loopback


def _address_part(value: str) -> str:
    """``0.0.0.0:8000`` → ``0.0.0.0``, ``[::]:80`` → ``[::]``, ``http://0.0.0.0:80/`` → ``0.0.0.0``."""
    value = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", value.strip()).split("/", 1)[0]
    if value.startswith("["):
        return value.split("]", 1)[0] + "]"
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


def _is_address(host: str) -> bool:
    host = normal_host(host)
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return _ipv4(host) is not None and "." in host


def exposed_addresses(words: list[str]) -> list[str]:
    """The addresses beyond this machine that a server's arguments bind to: ``--bind 0.0.0.0``,
    ``--host=192.168.1.5``, ``-S 0.0.0.0:8000``, ``[::]:80``; a name or a loopback address is not one."""
    found: list[str] = []
    previous = ""
    for i, text in enumerate(words):
        if text == "--host" and (i + 1 == len(words) or words[i + 1].startswith("-")):
            found.append(text)  # vite, astro, nuxt: `--host` alone listens on every interface
        option, eq, value = text.partition("=") if text.startswith("-") else ("", "", text)
        bound = bool(eq) and bool(_BIND_OPTION.match(option))
        if not eq:
            bound = bool(_BIND_OPTION.match(previous))
        host = _address_part(value)
        everywhere = normal_host(host) in ("0.0.0.0", "::") or host == "[::]"
        if (
            bound and (host.lower() in _ALL_INTERFACES or (_is_address(host) and not _is_loopback(host)))
        ) or (everywhere and (value == host or re.fullmatch(r".*:\d+", value))):
            found.append(value)
        previous = text if text.startswith("-") and not eq else ""
    return found


def binds_loopback(value: str | None) -> bool:
    """Whether a server told to bind ``value`` (None: its default, every interface) stays on this machine."""
    return value is not None and _is_loopback(_address_part(value))
