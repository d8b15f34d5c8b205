"""The words the rules are made of, in English and Russian: verbs by group, and the objects they act on.

They are written folded (``fold``: lower case, ё→е, typographic apostrophes→'), so that a request is folded
once instead of every pattern ignoring case, and the rules, the steps and the type cues all read one text.
One scan of ``trigger()`` finds the verbs and command names present (``scan``); a rule is only tried at, or
near, the words it starts from.  The objects are alternations for the rules to place after or before a
verb; each says what it stands for and what it leaves out ("the password-reset feature" is no password).
Kept apart from the rules so that a word can be added without reading how rules match, and from the
negation heuristics, which read sentences, not words.  ``remembered``, the bounded memo of ``scan`` (and of
the type cues), lives here because ``scan`` is its lowest user.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TypeVar

from vaultops.classifier.regex_union import union

T = TypeVar("T")
_FOLD = str.maketrans({"ё": "е", "’": "'", "‘": "'", "ʼ": "'"})


def fold(text: str) -> str:
    """Lower-case ``text`` keeping its length, so that match offsets are valid in both strings.

    Folding once is ~5x cheaper than re.IGNORECASE, which case-folds every character on every attempt."""
    low = text.lower()
    if len(low) != len(text):  # e.g. "İ" lowers to two code points
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low.translate(_FOLD)


# --- verb groups --------------------------------------------------------------------------------------------
# English: base and -ing forms, since "why were the rows deleted?" reports rather than requests.  Russian:
# imperative, infinitive, 1st plural and the action noun, never past tense or participles ("удалённый сервер"
# is a remote server, "не удалось" means "failed").  Groups prefixed ru_ are Russian; pp_ are participles,
# only used after "be"/"get"/"want"/"нужно, чтобы".
GROUPS: dict[str, str] = {
    "deploy": r"roll(?:ing)?\s+(?:back|out)|rollback|re-?deploy(?:ing)?|deploy(?:ing)?|releas(?:e|ing)"
    r"|ship(?:ping)?|revert(?:ing)?",
    "rekey": r"re-?key(?:ing)?",
    "rotate": r"burn(?:ing)?|rotat(?:e|ing)|re-?generat(?:e|ing)|regen|revok(?:e|ing)|re-?issu(?:e|ing)"
    r"|renew(?:ing)?"
    r"|expir(?:e|ing)|retir(?:e|ing)|mint(?:ing)?"
    r"|roll(?:ing)?|cycl(?:e|ing)|invalidat(?:e|ing)|swap(?:ping)?|refresh(?:ing)?",
    "del": r"delet(?:e|ing)|hard-delet(?:e|ing)|eras(?:e|ing)|wip(?:e|ing)|purg(?:e|ing)|shred(?:ding)?"
    r"|destroy(?:ing)?|annihilat(?:e|ing)|eradicat(?:e|ing)|exterminat(?:e|ing)|axe|scrap(?:ping)?"
    r"|nuk(?:e|ing)|obliterat(?:e|ing)|expung(?:e|ing)|tear(?:ing)?\s+down|teardown"
    r"|decommission(?:ing)?|kill(?:ing)?\s+off",
    "delnoun": r"deletion|removal|erasure",
    "rm": r"remov(?:e|ing)|drop(?:ping)?|truncat(?:e|ing)|clear(?:ing)?(?:\s+out)?|empty(?:ing)?"
    r"|flush(?:ing)?|prun(?:e|ing)|discard(?:ing)?|trash|scrub(?:bing)?|clean(?:ing)?(?:\s+(?:up|out))?"
    r"|get(?:ting)?\s+rid|(?:throw|blow)(?:ing)?\s+away",
    "reset": r"reset(?:ting)?|re-?creat(?:e|ing)",
    "overwrite": r"overwrit(?:e|ing)|rewrit(?:e|ing)",
    "format": r"re-?format(?:ting)?|format(?:ting)?",  # a disk, not a note: "format the table as markdown"
    "change": r"chang(?:e|ing)|modif(?:y|ying)|edit(?:ing)?|updat(?:e|ing)|alter(?:ing)?|adjust(?:ing)?"
    r"|tweak(?:ing)?|loosen(?:ing)?|tighten(?:ing)?|patch(?:ing)?|replac(?:e|ing)|renam(?:e|ing)"
    r"|configur(?:e|ing)|re-?configur(?:e|ing)|comment(?:ing)?\s+out|uncomment(?:ing)?"
    r"|relax(?:ing)?"
    r"|weaken(?:ing)?|bypass(?:ing)?|lift(?:ing)?",
    "raise": r"rais(?:e|ing)|increas(?:e|ing)|lower(?:ing)?|decreas(?:e|ing)|reduc(?:e|ing)|bump(?:ing)?"
    r"|doubl(?:e|ing)|halv(?:e|ing)|cut(?:ting)?|slash(?:ing)?",
    "write": r"writ(?:e|ing)|echo|touch",
    "add": r"add(?:ing)?|append(?:ing)?|insert(?:ing)?|put(?:ting)?",
    "create": r"creat(?:e|ing)|generat(?:e|ing)|issu(?:e|ing)|mint(?:ing)?|introduc(?:e|ing)",
    "make": r"mak(?:e|ing)",  # not a change by itself ("make a plan")
    "new": r"new|fresh|another",
    "install": r"(?:re|un)?install(?:ing)?|upgrad(?:e|ing)|downgrad(?:e|ing)",
    "setup": r"set(?:ting)?\s+up|setup",
    "set": r"set(?:ting)?",  # not a change by itself ("is STRIPE_API_KEY set?")
    "enable": r"(?:en|dis)abl(?:e|ing)|(?:un)?mask(?:ing)?|(?:turn"
    r"|switch)(?:ing)?\s+(?:\w+\s+)?(?:back\s+)?(?:on|off)",
    "move": r"mov(?:e|ing)|cop(?:y|ying)|symlink(?:ing)?",
    "restart": r"restart(?:ing)?|reboot(?:ing)?|reload(?:ing)?|stop(?:ping)?|kill(?:ing)?"
    r"|shut(?:ting)?\s+down|bounc(?:e|ing)",
    "push": r"push(?:ing)?|commit(?:ting)?",
    "force": r"force[ds]?",
    "merge": r"merg(?:e|ing)|land(?:ing)?|squash(?:ing)?|fast-forward(?:ing)?|rebas(?:e|ing)",
    "archive": r"archiv(?:e|ing)",
    "fix": r"fix(?:ing)?|repair(?:ing)?",
    "apply": r"appl(?:y|ying)",
    "run": r"run(?:ning)?|execut(?:e|ing)|perform(?:ing)?|trigger(?:ing)?|kick(?:ing)?\s+off|do|carry\s+out"
    r"|start",
    "migrate": r"migrat(?:e|ing)|migrations?",
    "pp_del": r"deleted|erased|wiped|purged|shredded|destroyed|nuked|removed|dropped|truncated|cleared"
    r"|emptied",
    "pp_rot": r"rotated|regenerated|revoked|re-?issued|renewed|rolled|cycled|invalidated|swapped",
    "pp_chg": r"replaced|changed|updated|modified|edited|patched|adjusted|altered|overwritten|raised|lowered"
    r"|increased|decreased|bumped|applied|migrated|merged|pushed",
    "send": r"send(?:ing)?|forward(?:ing)?|shoot|fire\s+off",  # not "resend": Resend is also an e-mail API
    "msg": r"e-?mail(?:ing)?|messag(?:e|ing)|dm|pm|whatsapp|telegram",
    "ping": r"ping(?:ing)?|mail|slack",
    "tweet": r"tweet(?:ing)?",
    "publish": r"post(?:ing)?|publish(?:ing)?|announc(?:e|ing)|broadcast(?:ing)?",
    "reply": r"repl(?:y|ying)(?:-all)?|respond(?:ing)?|answer(?:ing)?",
    "contact": r"contact(?:ing)?|reach(?:ing)?\s+out|get(?:ting)?\s+in\s+touch",
    "tell": r"notify(?:ing)?|inform(?:ing)?|tell(?:ing)?|remind(?:ing)?|invit(?:e|ing)|call(?:ing)?|cc|bcc"
    r"|hit\s+up|loop\s+in|buzz"
    r"|phon(?:e|ing)|ring|follow(?:ing)?\s+up|thank",
    "let": r"let",
    "buy": r"buy(?:ing)?|purchas(?:e|ing)|donat(?:e|ing)|top(?:ping)?[\s-]*up|topup|rent(?:ing)?"
    r"|splurg(?:e|ing)|shell(?:ing)?\s+out|cough(?:ing)?\s+up|pony(?:ing)?\s+up|fork(?:ing)?\s+out"
    r"|foot(?:ing)?\s+the\s+bill|reimburs(?:e|ing)|sponsor(?:ing)?|pre-?pay(?:ing)?|chip(?:ping)?\s+in"
    r"|refund(?:ing)?",
    "pay": r"pay(?:ing)?|charg(?:e|ing)|tip",
    "invoice": r"invoic(?:e|ing)|bill",
    "order": r"order(?:ing)?|register(?:ing)?|spend(?:ing)?|wire|transfer(?:ring)?|provision(?:ing)?"
    r"|spin(?:ning)?\s+up",
    "subscribe": r"subscrib(?:e|ing)|sign(?:ing)?\s+(?:us\s+|me\s+|them\s+)?up",
    "get": r"get(?:ting)?|grab(?:bing)?",
    "cost": r"cost|стоить",
    "sms": r"sms\w*|смс\w*|эсэмэс\w*|texts?|texting|txt|twilio|твилио|imessage|текстов\w*",
    "cmd": r"rm|rmdir|unlink|git|gh|ssh-keygen|passwd|chpasswd|stripe|systemctl|launchctl|crontab|visudo"
    r"|chmod|chown|chgrp|sed|tee|cp|mv|ln|rsync|ufw|iptables|sysctl|useradd|userdel|usermod|groupadd"
    r"|docker|podman|kubectl|redis-cli|flushall|flushdb|dropdb|mkfs(?:\.\w+)?|dd|find|xargs|aws|gsutil"
    r"|terraform|supabase|prisma|alembic|rails|rake|knex|flyway|sequelize|dbmate|manage\.py|sendmail"
    r"|mutt|himalaya|gws|bfg|trash-empty|doppler|update-alternatives",
    "sysp": r"/(?:etc|usr|boot|var/lib|lib|lib64|bin|sbin|root|opt|sys)",
    "ru_del": r"видал(?:и|іть|ити|яй)|зітр(?:и|іть)|знищ(?:и|іть)|похер(?:ь|ьте|ить)|кильн(?:и|ите|уть)"
    r"|замоч(?:и|ите)|аннигилир(?:уй|уйте|овать)|убе(?:й"
    r"|йте)|удал(?:и|ите|ить|им|ишь|ю|ять|яй|яйте|яем|яя|ени[еяюи]|ением)|сотр(?:и|ите|ем|у)"
    r"|стереть"
    r"|стира(?:ть|й|йте|ни[еяю])|уничтож(?:ь|ьте|ить|им|ать|ай|айте|ени[еяю])|снес(?:и|ите|ти|ем)"
    r"|снос(?:ить|и)|(?:за|вы)чист(?:и|ите|ить|им|к[аиу])|(?:за|вы)чища(?:ть|й|йте)|затр(?:и|ите)"
    r"|затереть|затира(?:ть|й|йте)|дропн(?:и|ите|уть|ем)|грохн(?:и|ите|уть|ем)|выпил(?:и|ите|ить)"
    r"|удалив|стерев|сотрев|очистив|вычистив|снеся|уничтожив|затерев",  # "by deleting": a means
    "ru_rm": r"очист(?:и|ите|ить|им|к[аиуе])|очища(?:ть|й|йте|ем)|почист(?:и|ите|ить|им)|почища(?:ть|й|йте)"
    r"|убер(?:и|ите|ем)|убрать|убира(?:ть|й|йте)|выкин(?:ь|ьте|уть|ем)|выкидыва(?:ть|й|йте)"
    r"|выброс(?:ь|ьте|ить|им)|выбрасыва(?:ть|й|йте)|обнул(?:и|ите|ить|им)|обнуля(?:ть|й|йте)"
    r"|избав(?:ься|ьтесь|иться)|(?:от)?форматир(?:уй|уйте|овать)",
    "ru_reset": r"сброс(?:ь|ьте|ить|им)|сбрасыва(?:ть|й|йте)|пересозда(?:й|йте|ть)",
    "ru_rotate": r"перекат(?:ай|айте|и|ите|ить)|ротир(?:уй|уйте|овать|уем)|ротан(?:и|ите|уть)|ротейтн(?:и"
    r"|ите|уть)|перевыпуст(?:и|ите|ить|им)|перевыпуска(?:ть|й|йте)"
    r"|перевыпуск[аеу]?|перегенер\w*|отзов(?:и|ите)|отозвать|отзыва(?:ть|й|йте)"
    r"|аннулир(?:уй|уйте|овать)|инвалидир(?:уй|уйте|овать)",
    "ru_rotnoun": r"ротаци(?:я|ю|и|ей)",
    "ru_change": r"подкрут(?:и|ите|ить)|докрут(?:и|ите|ить)|подправ(?:ь|ьте|ить)|измен(?:и|ите|ить|им)"
    r"|изменя(?:ть|й|йте)|поменя(?:й|йте|ть|ем)|меня(?:й|йте|ть)"
    r"|смен(?:и|ите|ить|им|а|у|ы)|сменя(?:ть|й|йте)|замен(?:и|ите|ить|им|а|у)|заменя(?:ть|й|йте)"
    r"|обнов(?:и|ите|ить|им)|обновля(?:ть|й|йте)|(?:под)?поправ(?:ь|ьте|ить)|правь(?:те)?"
    r"|править|(?:от)?редактир(?:уй|уйте|овать)|перепиш(?:и|ите)|переписать|перезапиш(?:и|ите)"
    r"|перезаписать|переименуй(?:те)?|переименовать|перенастро(?:й|йте|ить)"
    r"|скорректир(?:уй|уйте|овать)|перенес(?:и|ите|ти)|перемест(?:и|ите|ить)|скопиру(?:й|йте)"
    r"|(?:за|рас)комментир(?:уй|уйте|овать)",
    "ru_fix": r"исправ(?:ь|ьте|ить|им)|почин(?:и|ите|ить|им)|пофикс(?:и|ите|ить)",
    "ru_raise": r"подним(?:и|ите)|поднять|повыс(?:ь|ьте|ить|им)|сниз(?:ь|ьте|ить|им)|пониз(?:ь|ьте|ить)"
    r"|опуст(?:и|ите|ить)|удво(?:й|йте|ить)|уменьш(?:и|ите|ить)|увелич(?:ь|ьте|ить)",
    "ru_add": r"добав(?:ь|ьте|ить|им|ляй|лять)|(?:до|в|про|за)пиш(?:и|ите)|(?:до|в|про|за)писать"
    r"|встав(?:ь|ьте|ить)",
    "ru_create": r"созда(?:й|йте|ть|дим)|завед(?:и|ите)|завести|сгенерир(?:уй|уйте|овать)|сгенер(?:ь|и|ить)"
    r"|выпуст(?:и|ите|ить)|выда(?:й|йте|ть)",
    "ru_new": r"нов(?:ый|ая|ое|ые|ую|ого|ой|ых|ым|ыми)",
    "ru_do": r"сдела(?:й|йте|ть|ем)|провед(?:и|ите)|провести|выполн(?:и|ите|ить)|запуст(?:и|ите|ить)"
    r"|прогон(?:и|ите)|прогнать|накат(?:и|ите|ить|ывай)|примен(?:и|ите|ить|им)|раскат(?:и|ите|ить)"
    r"|начн(?:и|ите)|оформ(?:и|ите|ить)",
    "ru_set": r"установ(?:и|ите|ить|им)|устанавлива(?:й|йте|ть)|постав(?:ь|ьте|ить|им)|зада(?:й|йте|ть)"
    r"|выстав(?:и|ите|ить)|(?:пере)?настро(?:й|йте|ить|им)|(?:в|вы|от|под)ключ(?:и|ите|ить)",
    "ru_restart": r"перезапуст(?:и|ите|ить|им)|перезапуска(?:й|йте|ть)|перезапуск|перезагруз(?:и|ите|ить)"
    r"|рестартн(?:и|ите|уть)|останов(?:и|ите|ить)|убе(?:й|йте)|убить",
    "ru_deploy": r"(?:за|пере)?депло(?:й|йте|ить|им|йни)|выкат(?:и|ите|ить|им)|откат(?:и|ите|ить|им)"
    r"|релизн(?:и|ите|уть)",
    "ru_mergestrong": r"замердж(?:и|ь|ите|ить)|с?мерж(?:ь|и|ьте|ите|ить|ни|ните|нуть|ай|айте)|с?мердж(?:ь"
    r"|и|ьте|ите|ить|ни|ните"
    r"|нуть)|(?:в|за)мерж(?:ь|и|ить)",
    "ru_merge": r"мерд?ж(?![\s-]*конфликт)|вле(?:й|йте)|влить|вливай|сле(?:й|йте)|слить|слива(?:й|йте)"
    r"|прим(?:и|ите)|принять",
    "ru_push": r"запуш(?:ь|ьте|ить|им)|пушн(?:и|ите|уть)|пуш(?:ь|ить)|закоммит(?:ь|ьте|ить|им)"
    r"|коммит(?:ь|ьте)|зале(?:й|йте)|залить|залива(?:й|йте)",
    "ru_send": r"вышл(?:и|ите)|выслать|высыла(?:й|йте)"
    r"|отправ(?:ь|ьте|ить|им|к[аиу]|ля(?:й|йте|ть))|пришл(?:и|ите)|прислать|пошл(?:и|ите)|послать"
    r"|посыла(?:й|йте|ть)|(?:разо|пере)шл(?:и|ите)|разослать|переслать"
    r"|(?:рас|пере)сыла(?:й|йте|ть)|скин(?:ь|ьте|уть)|кин(?:ь|ьте)",
    "ru_write": r"напиш(?:и|ите|ем)|написать|пиши(?:те)?|черкни|отпиш(?:и|ите|ись)",
    "ru_reply": r"ответ(?:ь|ьте|ить|им)|отвеча(?:й|йте|ть)",
    "ru_contact": r"свяж(?:ись|итесь)|связаться|позвон(?:и|ите|ить)",
    "ru_tell": r"черкан(?:и|ите|уть)|звякн(?:и|ите|уть)|брякн(?:и|ите)|сообщ(?:и|ите|ить)|уведом(?:и|ите"
    r"|ить|ляй)|оповест(?:и|ите|ить)|напомн(?:и|ите|ить)"
    r"|набер(?:и|ите)|пригла(?:си|сите|сить)|маякн(?:и|ите|уть)",
    "ru_publish": r"опублику(?:й|йте)|опубликовать|вылож(?:и|ите|ить)",
    "ru_post": r"запост(?:и|ите|ить)|твитн(?:и|ите|уть)",
    "ru_buy": r"отслюняв(?:ь|ьте|ить)|(?:про)?спонсир(?:уй|уйте|овать)|куп(?:и|ите|ить|им|лю)|покуп(?:ай"
    r"|айте|ать|аем|к[аиуе])|(?:за|до|при)куп(?:и|ите|ить|к[аиу])"
    r"|оплат(?:и|ите|ить|им)|оплачива(?:й|йте|ть|ем)|заплат(?:и|ите|ить|им)|плат(?:и|ите|ить)"
    r"|закаж(?:и|ите|ем)|заказать|аренду(?:й|йте)|арендовать|задонат(?:ь|ьте|ить)"
    r"|подпиш(?:ись|итесь)|подписаться|пополн(?:и|ите|ить|им)",
    "ru_money": r"перевед(?:и|ите)|перевести|перечисл(?:и|ите|ить)|спиш(?:и|ите)|списать|потрат(?:ь|ьте|ить)"
    r"|трат(?:ь|ьте|ить)|закин(?:ь|ьте|уть)|продл(?:и|ите|ить|им)|(?:про)?апгрейд\w*"
    r"|перейд(?:и|ите|ем)|перейти|верн(?:и|ите|уть)",
    "ru_migrate": r"с?мигрир(?:уй|уйте|овать)|миграц\w*",
    "ru_pp_del": r"(?:удален|стерт|уничтожен|очищен|снесен|вычищен)[аоы]?",
    "ru_pp_key": r"(?:перевыпущен|сменен|заменен|отозван|обновлен|изменен|сброшен)[аоы]?",
}


@functools.cache
def trigger() -> re.Pattern[str]:
    """One pattern for every verb and command name; built on first use, which keeps imports quick."""
    return re.compile(r"(?<!\w)(?:" + union(GROUPS.values()) + r")(?!\w)")


@functools.cache
def _group_res() -> dict[str, re.Pattern[str]]:
    return {name: re.compile(fragment) for name, fragment in GROUPS.items()}


_GROUPS_OF: dict[str, frozenset[str]] = {}  # memo: trigger word -> its groups
# Verbs that ask to change something (classify: safety "high").
CHANGE_GROUPS = frozenset(
    {
        "del",
        "rm",
        "reset",
        "overwrite",
        "format",
        "change",
        "write",
        "add",
        "create",
        "install",
        "setup",
        "enable",
        "move",
        "restart",
        "deploy",
        "push",
        "force",
        "merge",
        "fix",
        "apply",
        "migrate",
        "rotate",
        "ru_del",
        "ru_rm",
        "ru_reset",
        "ru_rotate",
        "ru_change",
        "ru_fix",
        "ru_add",
        "ru_create",
        "ru_set",
        "ru_restart",
        "ru_deploy",
        "ru_mergestrong",
        "ru_push",
    }
)


def remembered(memo: dict[str, T], key: str, compute: Callable[[str], T]) -> T:
    """``compute(key)``, kept in ``memo``; bounded, so that arbitrary input cannot grow it without limit."""
    found = memo.get(key)
    if found is None:
        found = compute(key)
        if len(memo) > 50_000:
            memo.clear()
        memo[key] = found
    return found


def _groups_of(word: str) -> frozenset[str]:
    return frozenset(n for n, r in _group_res().items() if r.fullmatch(word))


def scan(low: str) -> list[tuple[frozenset[str], int, int]]:
    """(groups, start, end) of every trigger word in the folded text."""
    return [
        (remembered(_GROUPS_OF, m.group(0), _groups_of), m.start(), m.end()) for m in trigger().finditer(low)
    ]


# --- objects ------------------------------------------------------------------------------------------------
_PATH = r"~/[\w./*@+-]*|\./[\w./*@+-]+|\.\./[\w./*@+-]+|/[\w.*@+-][\w./*@+-]*|\*[\w.*]*"
DATA = (  # what deleting loses: data, not code
    r"schemas?|files?|folders?|dirs?|director(?:y|ies)|rows?|records?|entr(?:y|ies)|users?|accounts?"
    r"|customers?"
    r"|clients?|branch(?:es)?|tables?|databases?|dbs?|backups?|snapshots?|logs?|data(?:sets?)?|repos?"
    r"|repositor(?:y|ies)|buckets?|containers?|volumes?|images?|notes?|documents?|attachments?|uploads?|tags?"
    r"|releases?|commits?|history|trash|bin|recycle\s+bin|everything|inbox|mailbox|archives?|_archive|storage"
    r"|disks?|drives?|partitions?|collections?|objects?|blobs?|media|photos?|videos?|projects?|workspaces?"
    r"|tenants?|contacts?|leads?|orders?|invoices?|vault|stash|duplicates?(?!\s+(?:lines?|paragraphs?"
    r"|headings?|words?|imports?|code|blocks?|sentences?|bullets?|tags?"
    r"|links?)(?!\w))|pii|personal\s+data|environments?"
    r"|stacks?|clusters?|droplets?|vms?|" + _PATH
)
DATA_RU = (
    r"файл\w*|папк\w*|каталог\w*|директори\w*|строк\w*|запис(?:ь|и|ей|ям|ями|ях)|пользовател\w*|юзер\w*"
    r"|аккаунт\w*|учетк\w*|клиент\w*|ветк\w*|бранч\w*|таблиц\w*|баз(?:а|у|ы|е|ой|ам|ами|ах)?|бд"
    r"|данн(?:ые|ых|ым|ыми)|бэкап\w*|бекап\w*|резервн\w*|лог(?:и|ов|ам|ами|ах|а|е|у)?|журнал\w*|истори\w*"
    r"|репозитори\w*|репо|бакет\w*|контейнер\w*|образ(?:ы|ов)|снапшот\w*|снимк\w*|письм\w*|писем|сообщени\w*"
    r"|заметк\w*|документ\w*|вложени\w*|тег\w*|релиз\w*|коммит\w*|корзин\w*|все|весь|всех|дубл\w*|диск\w*"
    r"|раздел\w*|том(?:а|ов|ы)|" + _PATH
)
DISK = (
    r"disks?|drives?|partitions?|volumes?|ssd|hdd|sd\s+card|usb|/dev/\S+|диск\w*|раздел\w*|флешк\w*"
    r"|накопител\w*"
)
CODE = (  # "delete the unused import" edits code: these objects keep a strong verb from blocking
    r"(?:(?:the|a|an|all|any|this|that|these|those|unused|dead|duplicated?|redundant|stray|extra"
    r"|debug(?:ging)?|old|leftover|commented[- ]out|obsolete|temporary)\s+){0,3}(?:functions?|methods?"
    r"|class(?:es)?|variables?|vars?|imports?|comments?|docstrings?|prints?|print\s+statements?|console\.log"
    r"|log(?:ging)?\s+(?:statements?|calls?)|type\s+hints?|parameters?|params?|arguments?|args?|decorators?"
    r"|code|lines?|whitespace|semicolons?|assertions?|test\s+cases?|tests?|todos?|css|styles?|endpoints?"
    r"|buttons?|routes?|handlers?|requests?|calls?|operations?|permissions?|actions?|hooks?|flags?|modals?"
    r"|dialogs?|options?|characters?|chars?|words?|spaces?|trailing|paragraphs?|sentences?|sections?"
    r"|headings?|bullets?|typos?|blocks?|snippets?|hunks?|formatting|wording|style|layout|grammar|spelling"
    r"|prose|markdown|indentation)(?!\w)|функци|метод|переменн|импорт|абзац|предложени|раздел"
    r"|комментари|отладочн|неиспользуем\w*\s+(?:импорт|функци|переменн|код)"
)
SECRET = (  # the lookarounds drop database keys, token budgets and the password-reset feature
    r"(?:api|access|secret|private|ssh|deploy|signing|service[- ]role|anon|master|encryption|gpg|pgp|webhook"
    r"|bot|root|admin)[\s_-]*key(?:s|\s*pairs?)?|keypairs?"
    r"|key(?<!primary\skey)(?<!foreign\skey)(?<!sort\skey)(?<!dict\skey)(?<!json\skey)(?<!cache\skey)"
    r"(?<!hot\skey)(?<!partition\skey)(?<!unique\skey)(?<!composite\skey)(?:s|\s*pairs?)?"
    r"|[a-z0-9_]*_(?:key|token|secret|password|pwd|pat|credentials?)(?:_[a-z0-9]+)*"  # STRIPE_SECRET_KEY
    r"|tokens?(?!\s+(?:counts?|limits?|budgets?|usage|length|window|costs?|prices?))|secrets?|passphrases?"
    r"|creds|pats?|personal\s+access\s+tokens?|sk|sk_\w+|passwords?(?!\s+(?:reset\s+)?(?:flow|page|form"
    r"|link|e-?mail"
    r"|endpoint|button|feature|screen|field"
    r"|policy|strength|validation|manager|hash\w*))|credentials?|certificates?|certs?"
)
SECRET_RU = (
    r"ключ(?:и|а|ей|ом|ам|ами|ах|у)?|токен(?:ы|а|ов|ом|ам|ами|ах|у)?|секрет(?:ы|а|ов|ом|ам|ами|ах|у)?"
    r"|парол(?:ь|я|и|ей|ем|ям|ями|ях|ю)|креды|кред(?:ов|ах|ам)|учетн\w*\s+данн\w*|сертификат\w*"
)
SCHEMA_PARTS = (
    r"schemas?|columns?|constraints?|indexes|indices|index(?!\.)|foreign\s+keys?|primary\s+keys?|enums?"
    # "put the dates in a table", "as a markdown table": a table in a note, not in a database
    r"|(?<!in\sa\s)(?<!as\sa\s)(?<!to\sa\s)(?<!markdown\s)tables?(?!\s+(?:layout|component|view|styles?|css|headers?|rows?|cells?|width|of\s+contents))"
    r"|схем(?:а|у|ы|е|ой)|колонк\w*|столб(?:ец|ца|цы|цов)|пол(?:е|я|ей)|индекс\w*|таблиц\w*|ограничени\w*"
    r"|(?:внешн|первичн)\w*\s+ключ\w*"
)
PRICE = (
    r"prices?|pricing(?!\s+(?:pages?|copy|docs?|sections?|components?|cards?|layout|faq|text|wording))|price\s+points?|tariffs?|coupons?|promo(?:tion)?\s+codes?|discounts?|tiers?"
    r"|(?:pro|premium|basic|starter|business|team|enterprise|free|paid|annual|monthly|yearly|subscription"
    r"|billing)\s+(?:plans?|tiers?)|цен(?:а|ы|у|е|ой|ам|ами|ах|ник\w*|ообразовани\w*)?|прайс\w*|тариф\w*"
    r"|скидк\w*|купон\w*|промокод\w*|подписк\w*"
)
PROD = r"prod(?:uction)?|live|прод\w*|боев\w*|продакшн\w*"
MAIN = r"main|master|trunk|мейн|мастер\w*|основн\w*\s+ветк\w*"
PR = (
    r"prs?|pull\s+requests?|mrs?|merge\s+requests?|пр|пулл?[- ]?реквест\w*|пулреквест\w*|мр"
    r"|мерж[- ]?реквест\w*|#\d+"
)
RECIP = (  # people outside the team; "me", "us" and "the team" are not
    r"(?:(?:the|our|my|all|every|each|some|those|these)\s+(?:(?:the|our)\s+)?)?(?:clients?|customers?|users?"
    r"|leads?|prospects?|suppliers?|vendors?|partners?|investors?|subscribers?|contractors?|candidates?"
    r"|recruiters?|landlords?|accountants?|lawyers?|attorneys?|plumbers?|drivers?|buyers?|tenants?|patients?"
    r"|members?|followers?|audience|everyone|everybody|people|him|her|them|support|sales"
    r"|mailing\s+list)(?:'s)?(?!\s*(?:endpoints?|tables?|api|service|model|module|routes?|collection|db"
    r"|database|query|ids?|count|page))|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|@\w+"
)
RECIP_RU = (
    r"лид(?:ам|у|ов|ы)|клиент\w*|заказчик\w*|покупател\w*|пользовател\w*|юзер\w*|партнер\w*|поставщик\w*"
    r"|подрядчик\w*"
    r"|инвестор\w*|кандидат\w*|бухгалтер\w*|юрист\w*|арендодател\w*|подписчик\w*|абонент\w*|участник\w*"
    r"|водител\w*|всем|ему|ей|им|нему|ней|людям|поддержк\w*|саппорт\w*"
)
MESSAGES = (
    r"e-?mails?|mails?|messages?|msgs?|dms?|newsletters?|announcements?|notifications?|reminders?"
    r"|invit(?:e|es|ations?)|repl(?:y|ies)|follow-?ups?|letters?|tweets?|press\s+releases?|campaigns?|blasts?"
    r"|offers?|quotes?|proposals?|invoices?|письм\w*|писем|имейл\w*|емейл\w*|мейл\w*|почт(?:а|у|ой|е)"
    r"|сообщени\w*|месседж\w*|рассылк\w*|приглашени\w*|напоминани\w*|уведомлени\w*|пост(?:а|ы|ом)?|твит\w*"
    r"|предложени\w*|сч[её]т(?:а|ом)?"
)
CHANNEL = (
    r"(?:on|via|in|over|through|to|into|в|во|на|через)\s+(?:(?:our|the|my|a)\s+)?(?:whats\s*app|telegram"
    r"|slack|signal|discord|linkedin|twitter|x\.com|facebook|instagram|reddit|hacker\s+news|mastodon|bluesky"
    r"|imessage|wechat|viber|ватсап\w*|вотсап\w*|телеграм\w*|телег(?:у|е)|тг|слак\w*|личк\w*|директ"
    r"|почт(?:у|е)|канал\w*|чат\w*)(?![\w-])"
)
MONEY_RU = (
    r"бабл\w*|бабк\w*|пятихатк\w*|косар\w*|"
    r"деньг\w*|денег|средств\w*|оплат\w*|платеж\w*|баланс\w*|сч[её]т(?:а|у)?|кошел\w*|карт(?:у|ы|е)|сумм\w*"
    r"|\$\s*\d+|(?:0|1|2|3|4|5|6|7|8|9)\d*\s*(?:руб\w*|р\.|₽|\$|usd|долл\w*|евро|€)|бюджет\w*|подписк\w*"
    r"|тариф\w*|лиценз\w*|домен\w*|хостинг\w*|платн\w*|pro|премиум\w*|возврат\w*|бакс\w*"
)
# what a request can act on: the antecedents a later step's "it" may stand for (see steps.py)
OBJECTS = "|".join((DATA, DATA_RU, SECRET, SECRET_RU, MESSAGES, PR))
# "the sms module", "our Twilio balance": the service as a thing the code or the books name, not a message
SMS_THING = (
    r"(?!\s+(?:module|templates?|provider|invoices?|balance|feature|flags?|service|api|client"
    r"|integration"
    r"|code|tests?|mocks?|mocked|stubbed|webhooks?|logs?|settings?|bill|costs?|pricing|usage|quota"
    r"|account|dashboard|docs?|library|sdk|package)(?!\w))"
)
UNIT_FILE = r"[\w@-]+\.(?:service|timer|socket|plist)"  # only after the verb: it cannot start a fast union
SYSPATH = r"(?<![\w~.])/(?:etc|usr|boot|var/lib|lib|lib64|bin|sbin|root|opt|sys)(?!\w)\S*"
SYS_FILES = (  # system files, units, schedulers and the daemon's own configuration
    r"/(?:etc|usr|boot|var/lib|lib|lib64|bin|sbin|root|opt|sys)(?:/\S*)?"
    r"|(?:systemd|launchd)(?:[\s-]*(?:units?|services?|timers?|files?|юнит\w*))?"
    r"|(?:unit|service|timer)\s+files?|(?:timer|service|socket|systemd)\s+units?|launch\s*(?:agents?"
    r"|daemons?)"
    r"|crontab|cron(?:\s*(?:jobs?|entr(?:y|ies)|tab|schedule))?|sudoers|visudo|hosts\s+file|fstab"
    r"|resolv\.conf|sshd?_config|sshd\s+config\w*|sysctl|kernel\s+param\w*|firewall(?:\s+rules?)?|iptables"
    r"|ufw|authorized_keys|nginx(?:\s+|-)(?:config\w*|conf|sites?|server\s+blocks?|vhosts?)|nginx\.conf"
    r"|(?:~/)?\.ssh/\S*|ssh\s+config\w*|vaultops\.(?:ya?ml|toml|json|conf)|allow-?list|whitelist"
    r"|(?:approval|safety|policy)\s+rules|sites-(?:enabled|available)|apache\s+config\w*|caddyfile"
    r"|\.vaultops\S*"
    r"|vaultops\s+(?:config\w*|settings)|daemon'?s?\s+(?:own\s+)?(?:config\w*|settings)|hermes/config\S*"
    r"|\.hermes/config\S*|hermes\s+config\w*|daily[_ ]budget\w*|max[_ ]concurrent|allowed[_ ]roots"
    r"|safety[\s_-]+(?:rails?|rules?|class(?:es)?|checks?)|blocked\s+class(?:es)?"
    r"|system\s+(?:files?|config\w*|settings)|юнит\w*|крон\w*|кронтаб\w*|судоерс"
    r"|системн\w*\s+(?:файл\w*|конфиг\w*)|(?:конфиг|настройк)\w*\s+(?:nginx|vaultops|демона|hermes|sshd?"
    r"|системы)|файл\w*\s+hosts|фаервол\w*|файрвол\w*|брандмауэр\w*"
)
