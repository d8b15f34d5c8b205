"""The blocked classes: what a request may never make the daemon do, in English and Russian.

Rules read ``fold(text)``: lower case, ё→е, typographic apostrophes→', same length as the text (so offsets
also point into the original).  One scan of ``trigger()`` finds the verbs and command names present; a rule is
only tried at, or near, the words it starts from.  Together they keep classify() at about 50 µs for a typical
300-character request (see ``regex_union``).

A rule is verbs × objects with a short gap between them (both orders where Russian word order allows it).
Verb phrases honour a negation that directly governs the verb ("don't delete", "ничего не удаляй", "без
удаления"); literal commands (rm -rf, DROP TABLE, git push --force, gh pr merge, ...) never do.  When in
doubt a rule blocks: a needless escalation costs the person one answer, a missed one can cost data or money.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from vaultops.decide.regex_union import union

DEL, KEY, SCHEMA = "permanent-deletion", "key-rotation", "production-schema-or-pricing"
MERGE, MSG, SMS = "merge-to-main", "external-messaging", "sms"
SPEND, SYS, RUN = "spending-money", "system-files", "untrusted-code"
BLOCKED_CLASSES = (DEL, KEY, SCHEMA, MERGE, MSG, SMS, SPEND, SYS, RUN)
BLOCKED_LABELS = {
    DEL: "permanent deletion", KEY: "key or token rotation", SCHEMA: "production schema or pricing change",
    MERGE: "merge to main or branch deletion", MSG: "message to someone outside the team", SMS: "SMS",
    SPEND: "spending money", SYS: "change to system files or the daemon's config",
    RUN: "running decoded or downloaded code",
}
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
CHANGE_GROUPS = frozenset({"del", "rm", "reset", "overwrite", "format", "change", "write", "add", "create",
                           "install", "setup", "enable", "move", "restart", "deploy", "push", "force",
                           "merge", "fix", "apply", "migrate", "rotate", "ru_del", "ru_rm", "ru_reset",
                           "ru_rotate", "ru_change", "ru_fix", "ru_add", "ru_create", "ru_set",
                           "ru_restart", "ru_deploy", "ru_mergestrong", "ru_push"})


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
    return [(remembered(_GROUPS_OF, m.group(0), _groups_of), m.start(), m.end())
            for m in trigger().finditer(low)]


# --- negation and noun use ----------------------------------------------------------------------------------
# A negation directly before the verb, possibly with up to two of _NEG_SKIP between ("не надо удалять").
_NEG = frozenset({"don't", "dont", "never", "mustn't", "shouldn't", "won't", "cannot", "can't", "without",
                  "avoid", "no", "doesn't", "didn't", "нельзя", "незачем", "не", "ни", "без"})
_NEG2 = frozenset({("do", "not"), ("does", "not"), ("did", "not"), ("must", "not"), ("should", "not"),
                   ("shall", "not"), ("will", "not"), ("can", "not"), ("not", "to")})
_NEG_SKIP = frozenset({"ever", "accidentally", "actually", "be", "get", "надо", "нужно", "стоит", "смей",
                       "вздумай", "ничего", "пытайся", "было", "были", "была", "быть", "будет", "будут"})
_POSTNEG = re.compile(r"\s+(?:for\s+)?(?:nothing|none|ничего\s+не|не\s+(?:надо|нужно|стоит|будем"
                      r"|требуется))(?!\w)"
                      r"(?![^.;!?\n]{0,40}(?:except|but|apart\s+from|other\s+than|besides|save|кроме"
                      r"|за\s+исключением)"
                      r"(?!\w))")
_DET = re.compile(r"(?<!\w)(?:the|a|an|this|(?<!after\s)(?<!before\s)(?<!do\s)that|these|those|its|our|my"
                  r"|your"
                  r"|their|his|each|every|soft|for|pre|post|awaiting|pending)[\s-]+['\"`«“]?$")
# "the reload failed", "restart loop": a verb form followed by these is a noun
_NOUN_NEXT = re.compile(r"\s+(?:failed|fails|failing|broke|breaks|crashed|crashes|hangs|hung|loops?|errors?"
                        r"|errored|timed\s+out|took|takes|is|was|were|are|didn't|doesn't|did\s+not|does\s+not"
                        r"|succeeded|worked|works|logs?|step|status|history|window|button|endpoint)(?!\w)")


def negated(low: str, start: int, end: int) -> bool:
    """Is low[start:end] directly negated ("don't delete", "ничего не удаляй", "delete nothing")?"""
    if _POSTNEG.match(low, end):
        return True
    if start and not low[start - 1].isspace():  # "no, delete it": only whitespace may separate them
        return False
    words = [w.strip("([{«\"'“") for w in low[max(0, start - 60):start].split()]
    if start > 60:
        words = words[1:]  # the window may have cut the first word
    for _ in range(3):
        if not words:
            return False
        if words[-1] in _NEG or tuple(words[-2:]) in _NEG2 or words[-3:] == ["no", "need", "to"]:
            return True
        if words[-1] not in _NEG_SKIP:
            return False
        words.pop()
    return False


_QUESTION = re.compile(r"\s*(?:why|how|when|what|which|who|where|did|does|do|was|were|has|have|is|are|should"
                       r"|почему|зачем|когда|что|как|кто|где|отчего|нужно\s+ли|надо\s+ли|стоит\s+ли|какие"
                       r"|какой"
                       r"|какая|каких|сколько|есть\s+ли|свободен|свободна)(?!\w)")


SENTENCE_ENDS = ".!?;\n"
CLAUSE_ENDS = ".:;!?\n—–"  # a colon or a dash starts a step of its own too


def clause_start(low: str, pos: int, ends: str = SENTENCE_ENDS) -> int:
    """Where the sentence (or, with CLAUSE_ENDS, the clause) holding ``pos`` starts."""
    return max(low.rfind(c, 0, pos) for c in ends) + 1


def _clause_asks(low: str, pos: int, opening: re.Pattern[str]) -> bool:
    """The sentence around ``pos`` ends in a question mark and starts as ``opening`` says."""
    start = clause_start(low, pos)
    ends = [i for i in (low.find(c, pos) for c in ".!?;\n") if i >= 0]
    end = min(ends) if ends else len(low)
    return end < len(low) and low[end] == "?" and opening.match(low, start) is not None


def in_question(low: str, pos: int) -> bool:
    """The word at ``pos`` sits in a clause like "why did nginx restart?": it asks, it does not request."""
    return _clause_asks(low, pos, _QUESTION)


# "what does `git merge` do?", "how many seats are we paying for?": a question that asks about a thing
_ASKS = re.compile(r"\s*(?:(?:what|why|how|when|where|who|which)(?:\s+[\w'`-]+){0,3}?\s+(?:does|do|did|is|are"
                   r"|was|were|has|have|had|will|would|should|happens|happened)|(?:what|how|where|who)['’]?s"
                   r"|(?:would|could|should|is|will)\s+it\s+(?:be\s+)?(?:safe|ok|okay|wise|fine|smart|risky"
                   r"|a\s+good\s+idea|worth)|should\s+(?:we|i)|как\s+\w+(?:ть|ти|чь)(?:ся)?|почему|зачем"
                   r"|кто|где|какие|какой"
                   r"|какая|каких|сколько|что\s+(?:делает|значит|будет|случится|происходит)|как\s+(?:работает"
                   r"|устроен\w*|часто|давно))(?!\w)(?!\s+(?:not|if|about|don't|doesn't|не|если|бы)(?!\w))")
_TRY_IT = re.compile(r"(?<!\w)(?:(?:run|try|execute|do|apply|use)\s+(?:it|that|this|them)|go\s+ahead|запусти"
                     r"|выполни|сделай\s+это|попробуй|by\s+running|running\s+it)(?!\w)")


# "explain what `rm -rf` does": the command is the subject, up to the first "then" or "and"
_EXPLAIN = re.compile(r"\s*(?:explain|describe|tell\s+me|show\s+me|объясни\w*|расскажи"
                      r"|опиши)[\s,]+(?:in\s+plain"
                      r"\s+words\s+)?(?:what|how|why|the\s+differences?|что|как|зачем|разниц\w*)(?!\w)")
_NEXT_STEP = re.compile(r"(?<!\w)(?:then|and|after|и|затем|потом|после)(?!\w)|,")


_THEN_NO = re.compile(r"[^.?!;\n]*\?\s*(?:no|nope|нет)(?!\w)")
_YOU_DO = re.compile(r"(?<!\w)(?:you|u|ты|вы)(?:\s+\S+){0,2}\s+$")
_PLEASE_AFTER = re.compile(r"\?\s*(?:\S+\s+){0,2}?(?:please|pls|plz|asap|пожалуйста|плиз)(?!\w)")


def asks_about(low: str, pos: int) -> bool:
    """The word at ``pos`` sits in a question that asks what, why, how or which, or in "explain what …":
    it reports, it does not request ("why not", "what if" and "как бы" do request, and so does "…? run
    it")."""
    start = clause_start(low, pos)
    if _TRY_IT.search(low, pos) is not None or _PLEASE_AFTER.search(low, pos) is not None:
        return False
    if _THEN_NO.match(low, pos):
        return True  # "purge the cache? no — just tell me how big it is"
    if _YOU_DO.search(low, max(start, pos - 30), pos):
        return False  # "what do you say you wipe it?", "when can you purge it?": a request put as a question
    explain = _EXPLAIN.match(low, start)
    if explain is not None and _NEXT_STEP.search(low, explain.end(), pos) is None:
        return True
    return _clause_asks(low, pos, _ASKS)


# "how other teams rotate keys", "what it would cost to add 3 seats": the verb is talked about
_ABOUT = re.compile(r"(?:(?<!\w)how\s+(?:to|do|does|did|would|could|should|can|other|others|people|teams"
                    r"|companies|they|we|you|i|one)(?:\s+[^\s.:;!?]+){0,3}|(?:cost|costs|price|cheaper"
                    r"|expensive)\s+(?:us\s+|me\s+)?to|(?<!\w)(?:ways?|options?|guide|docs?|documentation"
                    r"|tutorial|plan|proposal|strategy|checklist|runbook|roadmap|outline|rfc"
                    r"|estimate)\s+(?:to|for|on|about)"
                    r"|(?<!\w)(?:hypothetically|suppose|imagine|if\s+(?:we|i|you|they)\s+(?:had|were|was"
                    r"|ever)\s+to"
                    r"|гипотетически|если\s+бы|допустим)(?:[\s,]+[^\s.:;!?]+){0,4}"
                    r"|(?<!\w)remind\s+me\s+(?:\S+\s+){0,3}?to"
                    r"|(?<!\w)difference\s+between(?:\s+\S+){0,4}|(?<!\w)(?:about|regarding|concerning)"
                    r"|(?<!\w)(?:write|draft|create|prepare"
                    r"|generate)\s+"
                    r"(?:a\s+|the\s+)?(?:new\s+)?(?:migration|script|function|test"
                    r"|patch)(?:\s+file)?(?:\s+\S+){0,2}"
                    r"|(?<!\w)(?:risks?|dangers?|pros\s+and\s+cons|meaning|purpose)\s+of"
                    r"|(?<!\w)сколько\s+(?:\S+\s+)?(?:будем|будет|нужно|надо|стоит"
                    r"|обойд\w*)(?:\s+\S+){0,1}|(?<!\w)как\s+(?:другие|обычно|правильно"
                    r"|лучше|нам|мы"
                    r"|люди|команды)|(?<!\w)(?:i'll|i\s+will|i'm\s+going\s+to|i\s+am\s+going\s+to|i\s+can"
                    r"|let\s+me"
                    r"|i'd\s+rather))\s+[`'\"«“]?$")
_DO_IT = re.compile(r"[^\n]*?(?:(?:and|then)\s+(?:do|apply|run|execute|carry\s+out|follow"
                    r"|implement)\s+(?:it|that"
                    r"|them|the\s+plan)|go\s+ahead|сделай\s+это"
                    r"|и\s+сделай|и\s+примени)")


def talked_about(low: str, start: int) -> bool:
    """Is the verb at ``start`` the subject of talk ("research how teams rotate keys"), not a request?
    Not when the request goes on to ask for it ("find out how to purge them, then do it")."""
    clause = clause_start(low, start, CLAUSE_ENDS)
    return (_ABOUT.search(low, max(clause, start - 60), start) is not None
            and _DO_IT.match(low, start) is None)


# a clause that reads, finds or reports ("list the SMS templates", "find the note titled 'Delete me'")
_READ_START = re.compile(r"\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:list|find|search|show"
                         r"|tell\s+me|summari[sz]e"
                         r"|translate|proofread|read|count|check|look\s+(?:at|for|up|through)|review"
                         r"|describe|grep"
                         r"|locate|quote|cite|перечисли|найди|покажи|прочитай|проверь|посмотри|кратко"
                         r"|перескажи)(?!\w)")
_STEP_SEP = re.compile(r"(?<!\w)(?:then|and|also|after|you|u|way\s+to|how\s+to|by|via|through|to|so|until"
                       r"|unless|if"
                       r"|when|и|затем|потом|после|чтобы|через|если|пока)(?!\w)"
                       r"|,\s*[^\W\d_]+\s")
_COMMAND = re.compile(r"(?:sudo\s+)?(?:rm|rmdir|dd|mkfs\S*|git|chmod|chown|curl|wget|kill|systemctl"
                      r"|truncate|shred"
                      r"|drop\s+(?:table|database|schema))(?:\s+-|\s+/|\s+~|\s+\w+\s+-)")


def mentioned(low: str, pos: int, phrase: str) -> bool:
    """The words at ``pos`` are what a reading step reads about, not a step of their own: its clause starts
    with list, find, summarise, check, … and no "then", "and" or "you" leads to them.  A command written
    out (``rm -rf ~``) is never only mentioned."""
    m = _READ_START.match(low, clause_start(low, pos, CLAUSE_ENDS))
    first = phrase.split()[0] if phrase.split() else ""
    if m is None or _STEP_SEP.search(low, m.end(), pos + len(first)) is not None:
        return False
    if re.match(r"\s+[-/~.$]", low[m.end():]):
        return False  # "find /data -delete", "grep -rl …": the command, not the English verb
    return _COMMAND.match(phrase) is None


_IN_A_FILE = re.compile(r"[^.;!?\n]{0,60}?\s(?:in|from|of|inside"
                        r"|within)\s+(?:the\s+)?(?:[\w'-]+\s+)?[\w./-]+\.(?:md"
                        r"|txt|py|pyi|js|mjs|ts|tsx|jsx|go|rs|rb|java|kt|swift|c|h|cc|cpp|cs|php|sh|css"
                        r"|scss|html"
                        r"|vue|svelte|toml|ya?ml|json|ini|cfg|tex|rst)(?!\w|\.\w)")
_WHOLE = re.compile(r"(?<!\w)(?:files?|folders?|dir\w*|notes?\b(?!\s+(?:about|on))|everything|all|whole"
                    r"|entire"
                    r"|contents|rows|records|tables?|database|db|backups?|logs?)(?!\w)")


_NO_SMS = re.compile(r"(?<!\w)(?:don't|do\s+not|never|не)\s+(?:send|text|отправля\w*|шли|посыла\w*|слать)\w*"
                     r"(?:\s+[^\s.;!?]+){0,2}\s+$")
_OPEN_QUOTE = re.compile(r"(?:^|(?<=[\s(\[:]))['\"«“‘]")


# before a quotation: a verb that runs it, a command that takes it, or an option ("psql -c '…'")
_RUN_QUOTE = re.compile(r"(?<!\w)(?:run|execute|exec|eval|type|paste|do|запусти|выполни|psql|mysql|sqlite3"
                        r"|sh|bash"
                        r"|zsh|python\d?|node|ruby|perl|ssh|redis-cli|mongo\w*|sudo|echo|xargs)(?!\w)"
                        r"|(?:^|\s)-{1,2}[a-z]")


def quoted(low: str, start: int, end: int) -> bool:
    """The phrase is inside quotation marks within its sentence ("rename the note 'Delete me later'",
    «Удалить потом»): a name or a quotation, not a step.  Backticks are code and do not count; nor does a
    quotation that is to be run ("run 'rm -rf ~'")."""
    clause = clause_start(low, start)
    opens = list(_OPEN_QUOTE.finditer(low, clause, start))
    if not opens:
        return False
    mark = low[opens[-1].start()]
    closer = {"«": "»", "“": "”", "‘": "’"}.get(mark, mark)
    close = low.find(closer, end)
    if close < 0 or low.find("\n", end, close) >= 0:
        return False
    before = low[clause:opens[-1].start()]
    return _RUN_QUOTE.search(before) is None


def inside_a_file(low: str, pos: int) -> bool:
    """"Delete the empty line at the end of todo.md": an edit inside a text file, which git keeps, not a
    deletion of the file or of data."""
    m = _IN_A_FILE.match(low, pos)
    return m is not None and _WHOLE.search(low, pos, m.end() - 1) is None


_DET_WORD = re.compile(r"(?<!\w)(?:the|a|an|my|our|your|this|that|their)\s+(?!(?:old|new|whole|entire"
                       r"|current|last"
                       r"|first|same|other)\s)[a-z][\w-]+\s+$")
_DROP_ME = re.compile(r"\s+(?:me|us)\s+(?:a|an|the)\s")


def noun_use(low: str, start: int, end: int) -> bool:
    """Is an English verb a noun here: "the delete endpoint", "a restart", "soft-delete", "reload failed"?"""
    if low[start:end] in ("new", "fresh", "another"):  # adjectives: "with the new key" still asks for one
        return False
    if _DET_WORD.search(low, max(0, start - 24), start):
        return True  # "the launch tweet", "a database wipe": a noun with its modifier
    if low[start:end] == "drop" and _DROP_ME.match(low, end):
        return True  # "drop me a summary": send it to me
    return bool(_DET.search(low, max(0, start - 9), start) or _NOUN_NEXT.match(low, end))


# --- objects ------------------------------------------------------------------------------------------------
_PATH = r"~/[\w./*@+-]*|\./[\w./*@+-]+|\.\./[\w./*@+-]+|/[\w.*@+-][\w./*@+-]*|\*[\w.*]*"
_DATA = (  # what deleting loses: data, not code
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
_DATA_RU = (
    r"файл\w*|папк\w*|каталог\w*|директори\w*|строк\w*|запис(?:ь|и|ей|ям|ями|ях)|пользовател\w*|юзер\w*"
    r"|аккаунт\w*|учетк\w*|клиент\w*|ветк\w*|бранч\w*|таблиц\w*|баз(?:а|у|ы|е|ой|ам|ами|ах)?|бд"
    r"|данн(?:ые|ых|ым|ыми)|бэкап\w*|бекап\w*|резервн\w*|лог(?:и|ов|ам|ами|ах|а|е|у)?|журнал\w*|истори\w*"
    r"|репозитори\w*|репо|бакет\w*|контейнер\w*|образ(?:ы|ов)|снапшот\w*|снимк\w*|письм\w*|писем|сообщени\w*"
    r"|заметк\w*|документ\w*|вложени\w*|тег\w*|релиз\w*|коммит\w*|корзин\w*|все|весь|всех|дубл\w*|диск\w*"
    r"|раздел\w*|том(?:а|ов|ы)|" + _PATH
)
_DISK = (r"disks?|drives?|partitions?|volumes?|ssd|hdd|sd\s+card|usb|/dev/\S+|диск\w*|раздел\w*|флешк\w*"
         r"|накопител\w*")
_CODE = (  # "delete the unused import" edits code: these objects keep a strong verb from blocking
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
_SECRET = (  # the lookarounds drop database keys, token budgets and the password-reset feature
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
_SECRET_RU = (
    r"ключ(?:и|а|ей|ом|ам|ами|ах|у)?|токен(?:ы|а|ов|ом|ам|ами|ах|у)?|секрет(?:ы|а|ов|ом|ам|ами|ах|у)?"
    r"|парол(?:ь|я|и|ей|ем|ям|ями|ях|ю)|креды|кред(?:ов|ах|ам)|учетн\w*\s+данн\w*|сертификат\w*"
)
_SCHEMA = (
    r"schemas?|columns?|constraints?|indexes|indices|index(?!\.)|foreign\s+keys?|primary\s+keys?|enums?"
    r"|tables?(?!\s+(?:layout|component|view|styles?|css|headers?|rows?|cells?|width|of\s+contents))"
    r"|схем(?:а|у|ы|е|ой)|колонк\w*|столб(?:ец|ца|цы|цов)|пол(?:е|я|ей)|индекс\w*|таблиц\w*|ограничени\w*"
    r"|(?:внешн|первичн)\w*\s+ключ\w*"
)
_PRICE = (
    r"prices?|pricing|price\s+points?|tariffs?|coupons?|promo(?:tion)?\s+codes?|discounts?|tiers?"
    r"|(?:pro|premium|basic|starter|business|team|enterprise|free|paid|annual|monthly|yearly|subscription"
    r"|billing)\s+(?:plans?|tiers?)|цен(?:а|ы|у|е|ой|ам|ами|ах|ник\w*|ообразовани\w*)?|прайс\w*|тариф\w*"
    r"|скидк\w*|купон\w*|промокод\w*|подписк\w*"
)
_PROD = r"prod(?:uction)?|live|прод\w*|боев\w*|продакшн\w*"
_MAIN = r"main|master|trunk|мейн|мастер\w*|основн\w*\s+ветк\w*"
_PR = (r"prs?|pull\s+requests?|mrs?|merge\s+requests?|пр|пулл?[- ]?реквест\w*|пулреквест\w*|мр"
       r"|мерж[- ]?реквест\w*|#\d+")
_RECIP = (  # people outside the team; "me", "us" and "the team" are not
    r"(?:(?:the|our|my|all|every|each|some|those|these)\s+(?:(?:the|our)\s+)?)?(?:clients?|customers?|users?"
    r"|leads?|prospects?|suppliers?|vendors?|partners?|investors?|subscribers?|contractors?|candidates?"
    r"|recruiters?|landlords?|accountants?|lawyers?|attorneys?|plumbers?|drivers?|buyers?|tenants?|patients?"
    r"|members?|followers?|audience|everyone|everybody|people|him|her|them|support|sales"
    r"|mailing\s+list)(?:'s)?(?!\s*(?:endpoints?|tables?|api|service|model|module|routes?|collection|db"
    r"|database|query|ids?|count|page))|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|@\w+"
)
_RECIP_RU = (
    r"лид(?:ам|у|ов|ы)|клиент\w*|заказчик\w*|покупател\w*|пользовател\w*|юзер\w*|партнер\w*|поставщик\w*"
    r"|подрядчик\w*"
    r"|инвестор\w*|кандидат\w*|бухгалтер\w*|юрист\w*|арендодател\w*|подписчик\w*|абонент\w*|участник\w*"
    r"|водител\w*|всем|ему|ей|им|нему|ней|людям|поддержк\w*|саппорт\w*"
)
_MSG = (
    r"e-?mails?|mails?|messages?|msgs?|dms?|newsletters?|announcements?|notifications?|reminders?"
    r"|invit(?:e|es|ations?)|repl(?:y|ies)|follow-?ups?|letters?|tweets?|press\s+releases?|campaigns?|blasts?"
    r"|offers?|quotes?|proposals?|invoices?|письм\w*|писем|имейл\w*|емейл\w*|мейл\w*|почт(?:а|у|ой|е)"
    r"|сообщени\w*|месседж\w*|рассылк\w*|приглашени\w*|напоминани\w*|уведомлени\w*|пост(?:а|ы|ом)?|твит\w*"
    r"|предложени\w*|сч[её]т(?:а|ом)?"
)
_CHANNEL = (
    r"(?:on|via|in|over|through|to|into|в|во|на|через)\s+(?:(?:our|the|my|a)\s+)?(?:whats\s*app|telegram"
    r"|slack|signal|discord|linkedin|twitter|x\.com|facebook|instagram|reddit|hacker\s+news|mastodon|bluesky"
    r"|imessage|wechat|viber|ватсап\w*|вотсап\w*|телеграм\w*|телег(?:у|е)|тг|слак\w*|личк\w*|директ"
    r"|почт(?:у|е)|канал\w*|чат\w*)(?![\w-])"
)
_MONEY_RU = (
    r"бабл\w*|бабк\w*|пятихатк\w*|косар\w*|"
    r"деньг\w*|денег|средств\w*|оплат\w*|платеж\w*|баланс\w*|сч[её]т(?:а|у)?|кошел\w*|карт(?:у|ы|е)|сумм\w*"
    r"|\$\s*\d+|(?:0|1|2|3|4|5|6|7|8|9)\d*\s*(?:руб\w*|р\.|₽|\$|usd|долл\w*|евро|€)|бюджет\w*|подписк\w*"
    r"|тариф\w*|лиценз\w*|домен\w*|хостинг\w*|платн\w*|pro|премиум\w*|возврат\w*|бакс\w*"
)
# what a request can act on: the antecedents a later step's "it" may stand for (see steps.py)
OBJECTS = "|".join((_DATA, _DATA_RU, _SECRET, _SECRET_RU, _MSG, _PR))
# "the sms module", "our Twilio balance": the service as a thing the code or the books name, not a message
_SMS_THING = (r"(?!\s+(?:module|templates?|provider|invoices?|balance|feature|flags?|service|api|client"
              r"|integration"
              r"|code|tests?|mocks?|mocked|stubbed|webhooks?|logs?|settings?|bill|costs?|pricing|usage|quota"
              r"|account|dashboard|docs?|library|sdk|package)(?!\w))")
_UNIT_FILE = r"[\w@-]+\.(?:service|timer|socket|plist)"  # only after the verb: it cannot start a fast union
_SYSPATH = r"(?<![\w~.])/(?:etc|usr|boot|var/lib|lib|lib64|bin|sbin|root|opt|sys)(?!\w)\S*"
_SYS = (  # system files, units, schedulers and the daemon's own configuration
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


# --- rules --------------------------------------------------------------------------------------------------
@functools.cache
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)


@dataclass(frozen=True, slots=True)
class Rule:
    classes: tuple[str, ...]
    source: str  # compiled on first use: a text only ever reaches the few rules its words trigger
    triggers: frozenset[str]  # GROUPS names: the rule is only tried when one of them occurs
    negatable: bool  # verb phrases honour a direct negation; literal commands never do
    anchored: bool  # the match starts at the trigger word
    reach: int  # else: how far before the trigger word the match may start
    cased: bool = False  # matched against the original text (people's names, upper-case SQL)
    imperative: bool = False  # only counts at the start of a clause or after "please", "and", "can you"
    mask: int = 0  # BLOCKED_CLASSES as bits

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source)


_TOK = r"[^\s.!?;,]+(?:\.[^\s.!?;,]+)*"  # a word; a dot inside it (nginx.conf) does not end the sentence
# a reading verb in the gap takes the object over: "fix the bug and check /etc/hosts" changes nothing there
_READ = (r"check|read|look|see|show|inspect|verify|tell|compare|explain|cat|list|listing|naming|mentioning"
         r"|проверь|посмотри|покажи|прочитай"
         r"|глянь|выведи|сравни|объясни|узнай")
_CONJ = r"and|then|but|or|и|а|но|или|затем|потом"
_VERB_START = r"(?<![\w/.-])(?P<v>"  # not inside a path or identifier (/api/delete-account, soft-delete)


def _gap(n: int, stop: str) -> str:
    return rf"(?:[\s,]+(?!(?:{stop})(?!\w)){_TOK}){{0,{n}}}?[\s,]+[`'\"«(\[]?\.?(?:[\w.]+-)?"


def _verb(groups: str) -> str:
    return _VERB_START + "|".join(f"(?:{GROUPS[g]})" for g in groups.split()) + r")(?![\w/-]|\.\w)"


def _rule(classes: tuple[str, ...], groups: str, pattern: str, negatable: bool = True, cased: bool = False,
          anchored: bool | None = None, reach: int = 160, imperative: bool = False) -> Rule:
    if anchored is None:
        anchored = pattern.startswith(_VERB_START)
    mask = sum(1 << BLOCKED_CLASSES.index(c) for c in classes)
    return Rule(classes, pattern, frozenset(groups.split()), negatable, anchored, reach, cased,
                imperative, mask)


def vo(classes: tuple[str, ...], groups: str, obj: str, n: int = 4) -> Rule:
    """Verb, then within n words its object: "rotate the Stripe secret key"."""
    return _rule(classes, groups, _verb(groups) + _gap(n, _READ) + rf"(?:{union([obj])})(?!\w)")


def ov(classes: tuple[str, ...], groups: str, obj: str, n: int = 4) -> Rule:
    """Object, then the verb: Russian order ("ключ Stripe перевыпусти")."""
    obj_first = rf"(?<!\w)(?:{union([obj])})(?!\w)"
    return _rule(classes, groups, obj_first + _gap(n, _READ + "|" + _CONJ) + _verb(groups))


def both(classes: tuple[str, ...], groups: str, obj: str, n: int = 4) -> list[Rule]:
    return [vo(classes, groups, obj, n), ov(classes, groups, obj, n)]


def verb(classes: tuple[str, ...], groups: str, after: str = "") -> Rule:
    """A verb that is dangerous whatever its object (``after`` may exclude harmless continuations)."""
    return _rule(classes, groups, _verb(groups) + after)


def lit(classes: tuple[str, ...], groups: str, pattern: str, cased: bool = False, reach: int = 0) -> Rule:
    """A literal command or statement, starting at its trigger word (or ``reach`` before it): blocked even
    after "don't"."""
    return _rule(classes, groups, pattern, negatable=False, cased=cased, anchored=not reach, reach=reach)


_PASSIVE = r"(?:[\s,]+" + _TOK + r"){0,4}?\s+(?:be|get|gets|getting)\s+(?:\w+ly\s+)?"
# "get the token replaced", "I'd like the key rotated", "want the old rows deleted"
_CAUSE = r"(?<!\w)(?:get|got|have|had|want|wants|wanted|like|need|needs|needed)\s+(?:\S+\s+){0,4}?"
_AFTER_OBJ = r"(?!\w)(?:\s+\S+){0,3}?\s+"
_RU_WANT = (r"(?<!\w)(?:чтобы|долж(?:ен|н\w*)|нужно|надо|пусть|хочу|необходимо"
            r"|можно)(?:[\s,]+\S+){0,6}?[\s,]+(?:был[аио]?\s+|быть\s+|будут\s+)?")
_MODAL_BE = (r"(?<!\w)(?:should|must|needs?\s+to|has\s+to|have\s+to|to|can)\s+(?:all\s+)?(?:be"
             r"|get)\s+(?:\w+ly\s+)?")
# a verb at the start of a clause, or after one of these words, is an imperative ("please text me")
_IMPERATIVE_AFTER = frozenset({"please", "pls", "kindly", "and", "then", "also", "just", "you", "to"})
_MSG_VERB_NOUN = (  # "email address", "WhatsApp bridge": the word is a noun, not "e-mail someone"
    r"(?=\s+\w)(?!\s+(?:bridge|api|bot|integration|webhooks?|sessions?|qr|groups?|numbers?|accounts?|business"
    r"|web|messages?|channels?|logs?|clients?|setup|login|address(?:es)?|templates?|service|provider|server"
    r"|queue|settings|config\w*|verification|validation|fields?|notifications?|delivery|bounces?|sending"
    r"|sender|domain|dns|records?|spf|dkim|dmarc|inbox|the|our|my|a|an|to|is|was|from|for|and|or|in|on"
    r"|with)(?!\w))"
)

RULES: tuple[Rule, ...] = (
    # permanent deletion
    lit((DEL,), "cmd", r"(?<![\w-])rm\s+(?:-{1,2}[\w-]+\s+)*(?:-|[~/.*$\"'`]|[\w-]+[./])"
                       r"|(?<![\w-])(?:rmdir|unlink)\s+\S|git\s+clean\s+-\S*[fdx]|git\s+reset\s+--hard"
                       r"|git\s+stash\s+(?:drop|clear)|git\s+filter-(?:branch|repo)|(?<!\w)bfg(?!\w)"
                       r"|(?:docker|podman)\s+(?:(?:system|volume|image|container|network|builder)\s+)?(?:rm"
                       r"|rmi|prune)(?!\w)|kubectl\s+delete|flush(?:all|db)|dropdb|mkfs"
                       r"|(?<!\w)dd\s[^\n]*?of=/dev/|(?<!\w)find\s[^\n;|&]*?\s-delete(?!\w)"
                       r"|xargs\s+(?:-\S+\s+)*rm(?!\w)|aws\s+s3\s+(?:rm|rb)(?!\w)|gsutil\s+(?:-m\s+)?rm"
                       r"|terraform\s+destroy|supabase\s+db\s+reset|trash-empty"),
    lit((DEL, SCHEMA), "rm", r"(?<!\w)drop\s+(?:table|database|schema|column|index|view|constraint|type"
                             r"|trigger|extension|materialized\s+view)(?!\w)"),
    lit((DEL,), "rm del", r"(?<!\w)truncate\s+table(?!\w)|(?<!\w)delete\s+from\s+[\w\"`.]+"),
    lit((DEL,), "rm", r"(?<!\w)TRUNCATE(?!\w)", cased=True),
    lit((DEL, MERGE), "cmd force push", r"git\s+push\b[^\n;|&]*?(?:\s--force(?:-with-lease)?|\s-f|\s\+\S"
                                        r"|\s--delete|\s-d|\s:\S)(?![\w-])|git\s+branch\s+(?:-\S+\s+)*-(?:d"
                                        r"|-delete)(?!\w)|(?<!\w)force[ds]?[\s-]*push(?!ed)\w*"
                                        r"|(?<!\w)push(?:ing)?\s+(?:\S+\s+){0,3}--force"),
    verb((DEL,), "del", rf"(?!\s+(?:{_CODE}))"),
    vo((DEL,), "rm overwrite", _DATA, 5),
    vo((DEL,), "reset", r"databases?|dbs?|data|repos?|repositor(?:y|ies)|branch(?:es)?|everything|--hard"
                        r"|factory|disks?|drives?|vps|servers?|instances?|tables?|history|volumes?"
                        r"|(?:" + _PROD + r")(?:\s+\w+)?"),
    vo((DEL,), "overwrite format", _DISK, 3),
    vo((DEL,), "delnoun", r"of\s+(?:\S+\s+){0,3}(?:" + _DATA + ")", 0),
    _rule((DEL,), "pp_del", rf"(?<!\w)(?:{union([_DATA])})(?!\w)" + _PASSIVE + _verb("pp_del")),
    _rule((DEL,), "pp_del", _MODAL_BE + _verb("pp_del"), reach=60),
    _rule((DEL,), "pp_del", _CAUSE + rf"(?:{_DATA}){_AFTER_OBJ}" + _verb("pp_del")),
    _rule((DEL,), "ru_pp_del", _RU_WANT + _verb("ru_pp_del")),
    verb((DEL,), "ru_del", rf"(?!\s+(?:\S+\s+)?(?:{_CODE}))"),
    *both((DEL,), "ru_rm ru_reset", _DATA_RU),
    vo((DEL,), "ru_rm", _DISK, 3),
    # key or token rotation
    lit((KEY,), "cmd", r"(?<![\w/-])(?:ssh-keygen|(?:ch)?passwd)(?!\w)|gh\s+secret\s+(?:set|delete|remove)"
                       r"|aws\s+iam\s+(?:create|delete|update)-access-key|doppler\s+secrets\s+(?:set"
                       r"|delete)"),
    vo((KEY,), "rotate reset change del rm", _SECRET + "|" + _SECRET_RU, 5),
    vo((KEY,), "create make new", rf"(?:(?:new|fresh|another)\s+)?(?:\S+\s+)?(?:{_SECRET})", 3),
    _rule((KEY,), "pp_rot pp_chg reset pp_del", rf"(?<!\w)(?:{union([_SECRET])})(?!\w)" + _PASSIVE
          + _verb("pp_rot pp_chg reset pp_del")),
    _rule((KEY,), "pp_rot pp_chg reset", _CAUSE + rf"(?:{_SECRET}){_AFTER_OBJ}"
          + _verb("pp_rot pp_chg reset")),
    vo((KEY,), "run", r"(?:key|token|secret|credential|password)s?\s+(?:rotation|rollover|regeneration"
                      r"|revocation)", 3),
    *both((KEY,), "ru_rotate ru_change ru_reset ru_del ru_create", _SECRET_RU + "|" + _SECRET, 6),
    verb((KEY,), "rekey"),
    ov((KEY,), "ru_pp_key", _SECRET_RU, 4),
    vo((KEY,), "ru_do", r"ротаци\w*|перевыпуск\w*|смен\w*\s+(?:" + _SECRET_RU + ")", 2),
    # production schema or pricing
    lit((SCHEMA,), "change create add", r"(?<!\w)(?:alter\s+(?:table|database|schema|type|column|index"
                                        r"|sequence|view)|create\s+(?:or\s+replace\s+)?(?:unique\s+)?(?:table"
                                        r"|index|schema|database|type|trigger|extension)"
                                        r"|(?:add|rename|alter)\s+column)(?!\w)"),
    lit((SCHEMA,), "cmd", r"supabase\s+(?:db\s+push|migration\s+(?:up|repair))"
                          r"|prisma\s+(?:migrate\s+(?:deploy|reset|dev)|db\s+push)"
                          r"|alembic\s+(?:upgrade|downgrade)|(?:rails|rake)\s+db:\w+|manage\.py\s+migrate"
                          r"|(?:knex|flyway)\s+migrate|sequelize\s+db:migrate|dbmate\s+up"
                          r"|stripe\s+(?:products|prices|plans|coupons|promotion_codes|subscriptions|charges"
                          r"|payment_intents|invoices|payment_links|customers|tax_rates|payouts|transfers"
                          r"|refunds)\s+(?:create|update|delete|archive)|stripe\s+(?:post|delete)\s+/v1/"),
    vo((SCHEMA,), "apply run push deploy", r"migrations?|schema\s+changes?|db\s+changes?", 4),
    vo((SCHEMA,), "migrate", r"migrations?\s+(?:\S+\s+){0,5}(?:to|on|in|against)\s+(?:the\s+)?(?:" + _PROD
       + r")|(?:the\s+)?(?:" + _PROD + r"|database|db|schema)", 3),
    vo((SCHEMA,), "change add create rm", _SCHEMA, 5),
    vo((SCHEMA,), "change raise set create make add rm del apply archive", _PRICE, 6),
    _rule((SCHEMA,), "change raise create make add rm new archive",  # "create a Team product ... in Stripe"
          _verb("change raise create make add rm new archive") + r"(?=[^.!?\n]{0,80}stripe)" + _gap(5, _READ)
          + r"(?:products?|plans?|prices?|coupons?)(?!\w)"),
    _rule((SCHEMA,), "new", _verb("new") + r"\s+(?:\S+\s+){0,2}(?:prices?|pricing|price\s+points?)(?!\w)"),
    # "Pro should cost $24", "тариф должен стоить 49"
    _rule((SCHEMA,), "cost", r"(?<!\w)(?:should|will|must|shall|could|can|is\s+going\s+to|долж(?:ен|н\w*)"
                             r"|будет"
          r"|будут)\s+"
          r"(?:теперь\s+)?" + _verb("cost"), reach=40),
    *both((SCHEMA,), "change raise set create make add rm del fix archive ru_change ru_fix ru_create ru_add"
          " ru_set ru_raise ru_del", r"(?:in|on|at|inside|в|на)\s+stripe", 5),
    *both((SCHEMA,), "ru_change ru_add ru_create ru_del ru_rm", _SCHEMA, 4),
    *both((SCHEMA,), "ru_change ru_raise ru_set ru_create ru_add ru_del ru_do", _PRICE, 4),
    vo((SCHEMA,), "ru_change ru_create ru_add ru_del", r"продукт\w*|план\w*(?=[^.!?\n]{0,60}stripe)", 4),
    _rule((SCHEMA,), "ru_new", _verb("ru_new") + r"\s+(?:\S+\s+)?(?:цен\w*|тариф\w*|прайс\w*)"),
    vo((SCHEMA,), "ru_do ru_push ru_deploy ru_migrate", r"миграц\w*|(?:базу|бд|схему|" + _PROD + ")", 3),
    ov((SCHEMA,), "ru_migrate", _PROD, 3),
    # merges to main, branch deletion
    lit((MERGE,), "cmd", r"git\s+push\b[^\n;|&]*?(?:\s|:|/)(?:main|master)(?!\w)|git\s+merge(?!\w)"
                         r"|gh\s+pr\s+merge"),
    vo((MERGE,), "merge", rf"{_PR}|branch(?:es)?|hotfix(?:es)?|dependabot|changes|diff|{_MAIN}"
                          rf"|prod(?:uction)?", 4),
    vo((MERGE,), "push", rf"(?:to|into|onto|on)\s+(?:the\s+)?(?:origin[\s/]+)?(?:{_MAIN}"
                         rf"|prod(?:uction)?\s+branch)",
       4),
    *both((MERGE, DEL), "del rm ru_del ru_rm", r"branch(?:es)?|ветк\w*|бранч\w*", 4),
    verb((MERGE,), "ru_mergestrong"),
    ov((MERGE,), "ru_mergestrong", rf"{_PR}|ветк\w*", 4),
    vo((MERGE,), "ru_merge", rf"{_PR}|{_MAIN}|ветк\w*|бранч\w*", 4),
    vo((MERGE,), "ru_push", rf"(?:в|на)\s+(?:{_MAIN})", 4),
    # messages to people outside the team
    lit((MSG,), "cmd ping", r"sendmail|(?<!\w)mail\s+-s|mutt\s|himalaya\s+(?:send|write|reply|forward)"
                            r"|gws\s+gmail\s[^\n]*send"),
    vo((MSG,), "send publish", _MSG, 5),
    vo((MSG,), "send", rf"(?:to|with)\s+(?:{_RECIP})", 6),
    vo((MSG,), "msg ping tell", _RECIP, 2),
    vo((MSG,), "msg", r"(?:(?:the|our|my|his|her|their|all|every|each|this|that)\s+\w+|everyone|everybody|him"
                      r"|her|them)(?!\s+(?:\S+\s+){0,4}?to\s+(?:me|us|myself|the\s+team)(?!\w))", 0),
    _rule((MSG,), "msg", _verb("msg") + _MSG_VERB_NOUN, imperative=True),  # "email pawel the quote"
    vo((MSG,), "send msg ping publish reply contact tell write tweet", _CHANNEL, 5),
    vo((MSG,), "reply", rf"(?:(?:to|on|in)\s+)?(?:(?:the|a|an|this|that|their|our|his|her)\s+)?"
                        rf"(?:{_RECIP}|{_MSG}"
       r"|reviews?|comments?|tickets?|threads?|inquir(?:y|ies)|enquir(?:y|ies)|feedback)", 3),
    verb((MSG,), "contact tweet", r"(?!\s+(?:form|page|details|info|information|us|list|field|section|button"
                                  r"|card|endpoint|sync|data|emails?|address)(?!\w))"),
    vo((MSG,), "let", rf"(?:{_RECIP})\s+know", 0),
    vo((MSG,), "write", rf"(?:to\s+(?:{_RECIP})|(?:e-?mails?|letters?|messages?|repl(?:y|ies)|dms?"
                        rf"|notes?)\s+to)",
       3),
    # "Email Pawel", "send the quote to Susan": a capitalised name after the verb, in the original text
    _rule((MSG,), "send msg tell contact reply write", r"(?<!\w)(?P<v>(?i:e-?mail|message|dm|tell|write\s+to"
          r"|reply\s+to|notify|contact|inform|remind|invite|whatsapp|thank|send|forward))\s+(?:\S+\s+to\s+)?"
          r"[A-Z][a-z]+(?!\w)", cased=True, anchored=True),
    _rule((MSG,), "ru_send ru_write ru_reply ru_contact ru_tell", r"(?<!\w)(?P<v>(?i:напиш(?:и|ите)|ответь"
                                                                  r"|позвони|сообщи|отправь|перешли|скинь"
                                                                  r"|набери|маякни|напомни|пригласи"
                                                                  r"|поблагодари))\s+[А-ЯЁ][а-яё]+",
          cased=True, anchored=True),
    # a named channel is enough: "скинь павлу ссылку в whatsapp" must not depend on a capital letter
    *both((MSG,), "ru_send ru_tell", rf"{_RECIP_RU}|{_MSG}|{_RECIP}|{_CHANNEL}", 4),
    *both((MSG,), "ru_write", rf"{_RECIP_RU}|{_CHANNEL}", 3),
    vo((MSG,), "ru_reply", rf"{_RECIP_RU}|{_MSG}|на\s+(?:отзыв\w*|комментари\w*|тикет\w*|обращени\w*)", 3),
    verb((MSG,), "ru_contact"),
    verb((MSG,), "ru_post"),
    vo((MSG,), "ru_publish", rf"пост\w*|стать\w*|новост\w*|анонс\w*|твит\w*|тред\w*|{_CHANNEL}", 4),
    vo((MSG,), "ru_do", r"рассылк\w*|обзвон\w*", 2),
    # any SMS at all: the person's standing rule is "never re-enable SMS without my approval"
    lit((SMS,), "sms send", r"(?<!\w)(?:sms\w*|смс\w*|эсэмэс\w*|twilio|твилио|imessage)" + _SMS_THING
                            + r"|text(?:\s+|-)messag\w*|текстов\w*\s+сообщени\w*"
                            r"|(?:send|shoot|fire\s+off|drop)(?:ing)?\s+(?:me\s+|us\s+|him\s+|her\s+"
                            r"|them\s+)?(?:a\s+"
                            r"|an\s+)?(?:texts?|txt)(?!\w)"),
    # "text the plumber", "please text me" (not "the text editor")
    _rule((SMS,), "sms", r"(?<!\w)(?:text|txt)(?:ing)?\s+(?:(?:the|our|my|all|every)\s+)?(?!(?:file|editor"
                         r"|box"
          r"|field|input|area|block|content|mode|search|colou?r|size|style|widget|format|wrap|node|diff"
          r"|output"
          r"|of)(?!\w))[\w@+]", negatable=False, anchored=True, imperative=True),
    # spending money
    lit((SPEND,), "cmd", r"stripe\s+(?:charges|payment_intents|subscriptions|invoices|payouts|transfers"
                         r"|refunds|topups)\s+(?:create|pay|confirm|capture)"),
    verb((SPEND,), "buy"),
    verb((SPEND,), "pay", r"(?!\s+(?:attention|close\s+attention|heed|off|of|ahead|forward|in\s+charge"
                          r"|up\s+the"
                          r"|my\s+phone|the\s+(?:phone|laptop|battery)|batter(?:y|ies)|customers?|users?"
                          r"|clients?"
                          r"|plans?|tiers?|accounts?|subscribers?|page|endpoint|flow|status|webhook|logs?"
                          r"|errors?|button|screen|details)(?!\w))"),
    vo((SPEND,), "order", r"(?:a|an|some|more|new|another|extra|second|\d+)|money|funds|credits?|[$€£]\s*\d+"
                          r"|domains?|vps|droplets?|instances?|gpus?|ec2|seats?|licen[cs]es?"
                          r"|(?:cloud|paid|dedicated|extra|second|another)\s+\w+", 3),
    vo((SPEND,), "install rotate raise", r"(?:plans?|tiers?|subscriptions?|accounts?|licen[cs]es?|seats?"
                                         r"|memberships?|domains?|hosting)(?!\s+(?:docs?|pages?))"
                                         r"|to\s+(?:the\s+)?(?:pro|premium|paid|business|enterprise|team|plus"
                                         r"|max|growth|scale)", 5),
    vo((SPEND,), "subscribe", r"(?:to\s+)?(?!(?:the\s+)?(?:events?|topics?|channels?|signals?|observables?"
                              r"|streams?|queues?|webhooks?|callbacks?|handlers?|listeners?|hooks?|updates?"
                              r"|changes?)(?!\w))\S+", 0),
    vo((SPEND,), "raise add install", r"(?:spend|spending|budget|credit)\s+(?:limits?|caps?)|seats?"
                                      r"|licen[cs]es?"
                                      r"|credits?", 3),
    vo((SPEND,), "invoice", _RECIP, 2),
    vo((SPEND,), "get", r"(?:a|an|another|second|new|extra|more|\d+)\s+(?:\S+\s+){0,2}(?:servers?|box(?:es)?"
                        r"|vps|instances?|machines?|droplets?|domains?|licen[cs]es?|seats?|subscriptions?"
                        r"|gpus?|credits?)", 1),
    verb((SPEND,), "ru_buy"),
    *both((SPEND,), "ru_money ru_raise ru_do ru_set", _MONEY_RU, 4),
    # changes to system files, units, cron, sudoers and the daemon's own config
    lit((SYS,), "cmd install", r"systemctl\s+(?:--?[\w-]+\s+)*(?:edit|enable|disable|mask|unmask|link|revert"
                               r"|set-property|daemon-reload|preset|reenable|add-wants|add-requires)(?!\w)"
                               r"|launchctl\s+(?:load|unload|bootstrap|bootout|enable|disable|remove|submit)"
                               r"|crontab\s+(?:-u\s+\S+\s+)?(?:-[er]|[\w.~-]+\.\w+|/\S+|~/\S+)|visudo"
                               r"|ufw\s+(?:allow|deny|reject|limit|delete|insert|enable|disable|reset)"
                               r"|iptables\s+-[aidfxnrp]|sysctl\s+-w|useradd|userdel|usermod|groupadd"
                               r"|update-alternatives"
        rf"|(?:chmod|chown|chgrp|sed\s+-i\S*)\s[^\n;|&]*?{_SYSPATH}|(?<!\w)(?:cp|mv|ln|rsync|install"
        rf"|dd)\s[^\n;|&]*?\s{_SYSPATH}\s*(?:$|[;|&\n`'\"])"),
    lit((SYS,), "sysp", rf"(?:>>?|(?<!\w)tee(?:\s+-a)?)\s*{_SYSPATH}", reach=40),
    *both((SYS,), "change add write overwrite create install setup set enable move rm del fix raise apply",
          _SYS, 6),
    vo((SYS,), "change add write overwrite create install setup set enable move rm del fix raise apply",
       _UNIT_FILE, 6),
    _rule((SYS,), "pp_chg pp_del", rf"(?<!\w)(?:{union([_SYS])})" + _PASSIVE + _verb("pp_chg pp_del")),
    _rule((SYS,), "pp_chg pp_del", _CAUSE + rf"(?:{_SYS}){_AFTER_OBJ}" + _verb("pp_chg pp_del")),
    *both((SYS,), "ru_change ru_add ru_create ru_set ru_fix ru_del ru_rm ru_raise", _SYS, 4),
    vo((SYS,), "ru_change ru_add ru_create ru_set ru_fix ru_del ru_rm ru_raise", _UNIT_FILE, 4),
)


_MASKS: dict[frozenset[str], tuple[int, int]] = {}  # memo: groups -> bitmasks of (all, literal) rule indexes


def _masks(groups: frozenset[str]) -> tuple[int, int]:
    """Which rules a trigger word can start, as bitmasks: all of them, and only the literal ones."""
    found = _MASKS.get(groups)
    if found is None:
        every = sum(1 << i for i, r in enumerate(RULES) if r.triggers & groups)
        found = _MASKS[groups] = (every, sum(1 << i for i, r in enumerate(RULES) if every >> i & 1
                                             and not r.negatable))
    return found


def find_blocked(text: str, low: str, hits: list[tuple[frozenset[str], int, int]]) -> list[tuple[str, str]]:
    """(class, matched phrase) for every blocked class the text asks for; ``hits`` is scan(low)."""
    marks: list[tuple[int, int, int]] = []  # (rules it can start, start, end) per trigger word
    todo = 0
    for groups, start, end in hits:
        every, literal = _masks(groups)
        # a negated verb ("ничего не удаляй") or an English noun ("the delete endpoint") only counts for
        # literal rules: checked once here, not in each of the rules that start from it
        english = low[start].isascii()
        if every != literal and (negated(low, start, end) or talked_about(low, start)
                                 or (english and noun_use(low, start, end))):
            every = literal
        if every:
            marks.append((every, start, end))
            todo |= every
    found: dict[str, str] = {}
    done = 0  # classes found, as bits
    while todo:
        i = (todo & -todo).bit_length() - 1  # rules in order: the lowest index first
        todo &= todo - 1
        rule = RULES[i]
        if not rule.mask & ~done:
            continue
        m = _match(rule, text if rule.cased else low, low, [(s, e) for mask, s, e in marks if mask >> i & 1])
        if m is not None:
            done |= rule.mask
            for c in rule.classes:
                found.setdefault(c, " ".join(m.group(0).lower().split()))
    return [(c, found[c]) for c in BLOCKED_CLASSES if c in found]


def _match(rule: Rule, subject: str, low: str, spots: list[tuple[int, int]]) -> re.Match[str] | None:
    if rule.anchored:  # the rule starts at its verb or command: try just there
        for start, _ in spots:
            m = rule.pattern.match(subject, start)
            if m is not None and _accept(rule, low, m):
                return m
        return None
    reach = rule.reach  # else: search around the trigger words
    lo, hi = max(0, spots[0][0] - reach), spots[0][1] + 120
    windows = []
    for start, end in spots[1:]:
        if start - reach > hi:
            windows.append((lo, hi))
            lo = start - reach
        hi = end + 120
    windows.append((lo, hi))
    for lo, hi in windows:
        pos = lo
        while (m := rule.pattern.search(subject, pos, min(hi, len(subject)))) is not None:
            if _accept(rule, low, m):
                return m
            pos = m.start() + 1
    return None


def _imperative(low: str, start: int) -> bool:
    """Is the word at ``start`` the first of its clause ("Hi team, text the plumber"), or after "please",
    "and", "you", ...?"""
    before = low[max(0, start - 20):start].rstrip()
    if not before or before[-1] in ".!?;:,\n—–-)»\"'":
        return True
    words = before.split()
    return bool(words) and words[-1] in _IMPERATIVE_AFTER


def _accept(rule: Rule, low: str, m: re.Match[str]) -> bool:
    """A verb phrase counts unless its verb is negated or is an English noun ("the delete endpoint"), or
    the phrase is only mentioned, asked about, or an edit inside a text file."""
    if rule.imperative and not _imperative(low, m.start()):
        return False
    if asks_about(low, m.start()) or mentioned(low, m.start(), m.group(0)) or quoted(low, m.start(), m.end()):
        return False
    if SMS in rule.classes and _NO_SMS.search(low, max(0, m.start() - 60), m.start()):
        return False  # "не отправляй никому смс", "don't send any sms": the person's own rule, said
    if DEL in rule.classes and inside_a_file(low, m.start()):
        return False
    if not rule.negatable or "v" not in rule.pattern.groupindex:
        return True
    start, end = m.span("v")
    if negated(low, start, end) or talked_about(low, start):
        return False
    return not (low[start:start + 1].isascii() and noun_use(low, start, end))
