"""The blocked classes: what a request may never make the daemon do, in English and Russian.

Rules read ``fold(text)`` and are only tried at, or near, the trigger words that ``scan`` found (both in
``vocabulary``); with ``regex_union``'s fast unions that keeps the rules at about 50 µs for a typical
300-character request.

A rule is verbs × objects with a short gap between them (both orders where Russian word order allows it).
Verb phrases honour a negation that directly governs the verb ("don't delete", "ничего не удаляй", "без
удаления"); literal commands (rm -rf, DROP TABLE, git push --force, gh pr merge, ...) never do.  When in
doubt a rule blocks: a needless escalation costs the person one answer, a missed one can cost data or money.
This module owns the class names, the rule table and the matcher: which words combine into a blocked
request.  The words themselves are ``vocabulary``'s, and why a matched verb may still not be asked for is
``negation``'s.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from vaultops.classifier.negation import (
    asks_about,
    imperative_at,
    inside_a_file,
    mentioned,
    negated,
    noun_use,
    quoted,
    talked_about,
)
from vaultops.classifier.regex_union import union
from vaultops.classifier.vocabulary import (
    CHANNEL,
    CODE,
    DATA,
    DATA_RU,
    DISK,
    GROUPS,
    MAIN,
    MESSAGES,
    MONEY_RU,
    PR,
    PRICE,
    PROD,
    RECIP,
    RECIP_RU,
    SCHEMA_PARTS,
    SECRET,
    SECRET_RU,
    SMS_THING,
    SYS_FILES,
    SYSPATH,
    UNIT_FILE,
)

DEL, KEY, SCHEMA = "permanent-deletion", "key-rotation", "production-schema-or-pricing"
MERGE, MSG, SMS = "merge-to-main", "external-messaging", "sms"
SPEND, SYS, RUN = "spending-money", "system-files", "untrusted-code"
BLOCKED_CLASSES = (DEL, KEY, SCHEMA, MERGE, MSG, SMS, SPEND, SYS, RUN)
BLOCKED_LABELS = {
    DEL: "permanent deletion",
    KEY: "key or token rotation",
    SCHEMA: "production schema or pricing change",
    MERGE: "merge to main or branch deletion",
    MSG: "message to someone outside the team",
    SMS: "SMS",
    SPEND: "spending money",
    SYS: "change to system files or the daemon's config",
    RUN: "running decoded or downloaded code",
}


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
_READ = (
    r"check|read|look|see|show|inspect|verify|tell|compare|explain|cat|list|listing|naming|mentioning"
    r"|describing|documenting|explaining|summari[sz]ing|covering|outlining|comparison|summary|overview"
    # the text's look takes the verb: "clean up the formatting of my journal notes"
    r"|formatting|wording|typos|spelling|grammar|layout|indentation|whitespace"
    r"|проверь|посмотри|покажи|прочитай"
    r"|глянь|выведи|сравни|объясни|узнай"
)
_CONJ = r"and|then|but|or|и|а|но|или|затем|потом"
_VERB_START = r"(?<![\w/.-])(?P<v>"  # not inside a path or identifier (/api/delete-account, soft-delete)


def _gap(n: int, stop: str) -> str:
    return rf"(?:[\s,]+(?!(?:{stop})(?!\w)){_TOK}){{0,{n}}}?[\s,]+[`'\"«(\[]?\.?(?:[\w.]+-)?"


def _verb(groups: str) -> str:
    return _VERB_START + "|".join(f"(?:{GROUPS[g]})" for g in groups.split()) + r")(?![\w/-]|\.\w)"


def _rule(
    classes: tuple[str, ...],
    groups: str,
    pattern: str,
    negatable: bool = True,
    cased: bool = False,
    anchored: bool | None = None,
    reach: int = 160,
    imperative: bool = False,
) -> Rule:
    if anchored is None:
        anchored = pattern.startswith(_VERB_START)
    mask = sum(1 << BLOCKED_CLASSES.index(c) for c in classes)
    return Rule(
        classes, pattern, frozenset(groups.split()), negatable, anchored, reach, cased, imperative, mask
    )


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
_RU_WANT = (
    r"(?<!\w)(?:чтобы|долж(?:ен|н\w*)|нужно|надо|пусть|хочу|необходимо"
    r"|можно)(?:[\s,]+\S+){0,6}?[\s,]+(?:был[аио]?\s+|быть\s+|будут\s+)?"
)
_MODAL_BE = (
    r"(?<!\w)(?:should|must|needs?\s+to|has\s+to|have\s+to|to|can)\s+(?:all\s+)?(?:be"
    r"|get)\s+(?:\w+ly\s+)?"
)
_MSG_VERB_NOUN = (  # "email address", "WhatsApp bridge": the word is a noun, not "e-mail someone"
    r"(?=\s+\w)(?!\s+(?:bridge|api|bot|integration|webhooks?|sessions?|qr|groups?|numbers?|accounts?|business"
    r"|web|messages?|channels?|logs?|clients?|setup|login|address(?:es)?|templates?|service|provider|server"
    r"|queue|settings|config\w*|verification|validation|fields?|notifications?|delivery|bounces?|sending"
    r"|sender|domain|dns|records?|spf|dkim|dmarc|inbox|the|our|my|a|an|to|is|was|from|for|and|or|in|on"
    r"|with)(?!\w))"
)

# the second half of a hyphenated name: "the sms-gateway service", "смс-шлюз" (not "sms-notifications")
_NAMED = (
    r"(?:gateway|service|server|worker|api|provider|module|queue|bridge|sender|relay|webhook|handler|client"
    r"|bot|daemon|app|proxy|router|logs?|config|tests?|templates?|ideas?|stats|docs?|counter|limits?"
    r"|costs?|pricing|integration|job|cron|timer|script|lib|sdk|шлюз\w*|сервис\w*|модул\w*)(?!\w)"
)
_NOT_A_FILE = r"(?:{})(?!\.\w)"  # "create tiers.md": a file named after the thing is a note, not the thing
RULES: tuple[Rule, ...] = (
    # permanent deletion
    lit(
        (DEL,),
        "cmd",
        r"(?<![\w-])rm\s+(?:-{1,2}[\w-]+\s+)*(?:-|[~/.*$\"'`]|[\w-]+[./])"
        r"|(?<![\w-])(?:rmdir|unlink)\s+\S|git\s+clean\s+-\S*[fdx]|git\s+reset\s+--hard"
        r"|git\s+stash\s+(?:drop|clear)|git\s+filter-(?:branch|repo)|(?<!\w)bfg(?!\w)"
        r"|(?:docker|podman)\s+(?:(?:system|volume|image|container|network|builder)\s+)?(?:rm"
        r"|rmi|prune)(?!\w)|kubectl\s+delete|flush(?:all|db)|dropdb|mkfs"
        r"|(?<!\w)dd\s[^\n]*?of=/dev/|(?<!\w)find\s[^\n;|&]*?\s-delete(?!\w)"
        r"|xargs\s+(?:-\S+\s+)*rm(?!\w)|aws\s+s3\s+(?:rm|rb)(?!\w)|gsutil\s+(?:-m\s+)?rm"
        r"|terraform\s+destroy|supabase\s+db\s+reset|trash-empty",
    ),
    lit(
        (DEL, SCHEMA),
        "rm",
        r"(?<!\w)drop\s+(?:table|database|schema|column|index|view|constraint|type"
        r"|trigger|extension|materialized\s+view)(?!\w)",
    ),
    lit((DEL,), "rm del", r"(?<!\w)truncate\s+table(?!\w)|(?<!\w)delete\s+from\s+[\w\"`.]+"),
    lit((DEL,), "rm", r"(?<!\w)TRUNCATE(?!\w)", cased=True),
    lit(
        (DEL, MERGE),
        "cmd force push",
        r"git\s+push\b[^\n;|&]*?(?:\s--force(?:-with-lease)?|\s-f|\s\+\S"
        r"|\s--delete|\s-d|\s:\S)(?![\w-])|git\s+branch\s+(?:-\S+\s+)*-(?:d"
        r"|-delete)(?!\w)|(?<!\w)force[ds]?[\s-]*push(?!ed)\w*"
        r"|(?<!\w)push(?:ing)?\s+(?:\S+\s+){0,3}--force",
    ),
    verb((DEL,), "del", rf"(?!\s+(?:{CODE}))"),
    vo((DEL,), "rm overwrite", DATA, 5),
    vo(
        (DEL,),
        "reset",
        r"databases?|dbs?|data|repos?|repositor(?:y|ies)|branch(?:es)?|everything|--hard"
        r"|factory|disks?|drives?|vps|servers?|instances?|tables?|history|volumes?"
        r"|(?:" + PROD + r")(?:\s+\w+)?",
    ),
    vo((DEL,), "overwrite format", DISK, 3),
    vo((DEL,), "delnoun", r"of\s+(?:\S+\s+){0,3}(?:" + DATA + ")", 0),
    _rule((DEL,), "pp_del", rf"(?<!\w)(?:{union([DATA])})(?!\w)" + _PASSIVE + _verb("pp_del")),
    _rule((DEL,), "pp_del", _MODAL_BE + _verb("pp_del"), reach=60),
    _rule((DEL,), "pp_del", _CAUSE + rf"(?:{DATA}){_AFTER_OBJ}" + _verb("pp_del")),
    _rule((DEL,), "ru_pp_del", _RU_WANT + _verb("ru_pp_del")),
    verb((DEL,), "ru_del", rf"(?!\s+(?:\S+\s+)?(?:{CODE}))"),
    *both((DEL,), "ru_rm ru_reset", DATA_RU),
    vo((DEL,), "ru_rm", DISK, 3),
    # key or token rotation
    lit(
        (KEY,),
        "cmd",
        r"(?<![\w/-])(?:ssh-keygen|(?:ch)?passwd)(?!\w)|gh\s+secret\s+(?:set|delete|remove)"
        r"|aws\s+iam\s+(?:create|delete|update)-access-key|doppler\s+secrets\s+(?:set"
        r"|delete)",
    ),
    vo((KEY,), "rotate reset change del rm", SECRET + "|" + SECRET_RU, 5),
    vo((KEY,), "create make new", rf"(?:(?:new|fresh|another)\s+)?(?:\S+\s+)?(?:{SECRET})", 3),
    _rule(
        (KEY,),
        "pp_rot pp_chg reset pp_del",
        rf"(?<!\w)(?:{union([SECRET])})(?!\w)" + _PASSIVE + _verb("pp_rot pp_chg reset pp_del"),
    ),
    _rule(
        (KEY,), "pp_rot pp_chg reset", _CAUSE + rf"(?:{SECRET}){_AFTER_OBJ}" + _verb("pp_rot pp_chg reset")
    ),
    vo(
        (KEY,),
        "run",
        r"(?:key|token|secret|credential|password)s?\s+(?:rotation|rollover|regeneration"
        r"|revocation)",
        3,
    ),
    *both((KEY,), "ru_rotate ru_change ru_reset ru_del ru_create", SECRET_RU + "|" + SECRET, 6),
    verb((KEY,), "rekey"),
    ov((KEY,), "ru_pp_key", SECRET_RU, 4),
    vo((KEY,), "ru_do", r"ротаци\w*|перевыпуск\w*|смен\w*\s+(?:" + SECRET_RU + ")", 2),
    # production schema or pricing
    lit(
        (SCHEMA,),
        "change create add",
        r"(?<!\w)(?:alter\s+(?:table|database|schema|type|column|index"
        r"|sequence|view)|create\s+(?:or\s+replace\s+)?(?:unique\s+)?(?:table"
        r"|index|schema|database|type|trigger|extension)"
        r"|(?:add|rename|alter)\s+column)(?!\w)",
    ),
    lit(
        (SCHEMA,),
        "cmd",
        r"supabase\s+(?:db\s+push|migration\s+(?:up|repair))"
        r"|prisma\s+(?:migrate\s+(?:deploy|reset|dev)|db\s+push)"
        r"|alembic\s+(?:upgrade|downgrade)|(?:rails|rake)\s+db:\w+|manage\.py\s+migrate"
        r"|(?:knex|flyway)\s+migrate|sequelize\s+db:migrate|dbmate\s+up"
        r"|stripe\s+(?:products|prices|plans|coupons|promotion_codes|subscriptions|charges"
        r"|payment_intents|invoices|payment_links|customers|tax_rates|payouts|transfers"
        r"|refunds)\s+(?:create|update|delete|archive)|stripe\s+(?:post|delete)\s+/v1/",
    ),
    vo((SCHEMA,), "apply run push deploy", r"migrations?|schema\s+changes?|db\s+changes?", 4),
    vo(
        (SCHEMA,),
        "migrate",
        r"migrations?\s+(?:\S+\s+){0,5}(?:to|on|in|against)\s+(?:the\s+)?(?:"
        + PROD
        + r")|(?:the\s+)?(?:"
        + PROD
        + r"|database|db|schema)",
        3,
    ),
    vo((SCHEMA,), "change add create rm", _NOT_A_FILE.format(SCHEMA_PARTS), 5),
    vo((SCHEMA,), "change raise set create make add rm del apply archive", _NOT_A_FILE.format(PRICE), 6),
    _rule(
        (SCHEMA,),
        "change raise create make add rm new archive",  # "create a Team product ... in Stripe"
        _verb("change raise create make add rm new archive")
        + r"(?=[^.!?\n]{0,80}stripe)"
        + _gap(5, _READ)
        + r"(?:products?|plans?|prices?|coupons?)(?!\w)",
    ),
    _rule((SCHEMA,), "new", _verb("new") + r"\s+(?:\S+\s+){0,2}(?:prices?|pricing|price\s+points?)(?!\w)"),
    # "Pro should cost $24", "тариф должен стоить 49"
    _rule(
        (SCHEMA,),
        "cost",
        r"(?<!\w)(?:should|will|must|shall|could|can|is\s+going\s+to|долж(?:ен|н\w*)"
        r"|будет"
        r"|будут)\s+"
        r"(?:теперь\s+)?" + _verb("cost"),
        reach=40,
    ),
    *both(
        (SCHEMA,),
        "change raise set create make add rm del fix archive ru_change ru_fix ru_create ru_add"
        " ru_set ru_raise ru_del",
        r"(?:in|on|at|inside|в|на)\s+stripe",
        5,
    ),
    *both((SCHEMA,), "ru_change ru_add ru_create ru_del ru_rm", SCHEMA_PARTS, 4),
    *both((SCHEMA,), "ru_change ru_raise ru_set ru_create ru_add ru_del ru_do", PRICE, 4),
    vo((SCHEMA,), "ru_change ru_create ru_add ru_del", r"продукт\w*|план\w*(?=[^.!?\n]{0,60}stripe)", 4),
    _rule((SCHEMA,), "ru_new", _verb("ru_new") + r"\s+(?:\S+\s+)?(?:цен\w*|тариф\w*|прайс\w*)"),
    vo((SCHEMA,), "ru_do ru_push ru_deploy ru_migrate", r"миграц\w*|(?:базу|бд|схему|" + PROD + ")", 3),
    ov((SCHEMA,), "ru_migrate", PROD, 3),
    # merges to main, branch deletion
    lit(
        (MERGE,),
        "cmd",
        r"git\s+push\b[^\n;|&]*?(?:\s|:|/)(?:main|master)(?!\w)|git\s+merge(?!\w)"
        r"|gh\s+pr\s+merge",
    ),
    vo(
        (MERGE,),
        "merge",
        rf"{PR}|branch(?:es)?|hotfix(?:es)?|dependabot|changes|diff|{MAIN}"
        rf"|prod(?:uction)?",
        4,
    ),
    vo(
        (MERGE,),
        "push",
        rf"(?:to|into|onto|on)\s+(?:the\s+)?(?:origin[\s/]+)?(?:{MAIN}"
        rf"|prod(?:uction)?\s+branch)",
        4,
    ),
    *both((MERGE, DEL), "del rm ru_del ru_rm", r"branch(?:es)?|ветк\w*|бранч\w*", 4),
    verb((MERGE,), "ru_mergestrong"),
    ov((MERGE,), "ru_mergestrong", rf"{PR}|ветк\w*", 4),
    vo((MERGE,), "ru_merge", rf"{PR}|{MAIN}|ветк\w*|бранч\w*", 4),
    vo((MERGE,), "ru_push", rf"(?:в|на)\s+(?:{MAIN})", 4),
    # messages to people outside the team
    lit(
        (MSG,),
        "cmd ping",
        r"sendmail|(?<!\w)mail\s+-s|mutt\s|himalaya\s+(?:send|write|reply|forward)"
        r"|gws\s+gmail\s[^\n]*send",
    ),
    vo((MSG,), "send publish", MESSAGES, 5),
    vo((MSG,), "send", rf"(?:to|with)\s+(?:{RECIP})", 6),
    vo((MSG,), "msg ping tell", RECIP, 2),
    vo(
        (MSG,),
        "msg",
        r"(?:(?:the|our|my|his|her|their|all|every|each|this|that)\s+\w+|everyone|everybody|him"
        r"|her|them)(?!\s+(?:\S+\s+){0,4}?to\s+(?:me|us|myself|the\s+team)(?!\w))",
        0,
    ),
    _rule((MSG,), "msg", _verb("msg") + _MSG_VERB_NOUN, imperative=True),  # "email pawel the quote"
    vo((MSG,), "send msg ping publish reply contact tell write tweet", CHANNEL, 5),
    vo(
        (MSG,),
        "reply",
        rf"(?:(?:to|on|in)\s+)?(?:(?:the|a|an|this|that|their|our|his|her)\s+)?"
        rf"(?:{RECIP}|{MESSAGES}"
        r"|reviews?|comments?|tickets?|threads?|inquir(?:y|ies)|enquir(?:y|ies)|feedback)",
        3,
    ),
    verb(
        (MSG,),
        "contact tweet",
        r"(?!\s+(?:form|page|details|info|information|us|list|field|section|button"
        r"|card|endpoint|sync|data|emails?|address)(?!\w))",
    ),
    vo((MSG,), "let", rf"(?:{RECIP})\s+know", 0),
    vo(
        (MSG,),
        "write",
        rf"(?:to\s+(?:{RECIP})|(?:e-?mails?|letters?|messages?|repl(?:y|ies)|dms?"
        rf"|notes?)\s+to)",
        3,
    ),
    # "Email Pawel", "send the quote to Susan": a capitalised name after the verb, in the original text
    _rule(
        (MSG,),
        "send msg tell contact reply write",
        r"(?<!\w)(?P<v>(?i:e-?mail|message|dm|tell|write\s+to"
        r"|reply\s+to|notify|contact|inform|remind|invite|whatsapp|thank|send|forward))\s+(?:\S+\s+to\s+)?"
        r"[A-Z][a-z]+(?!\w)",
        cased=True,
        anchored=True,
    ),
    _rule(
        (MSG,),
        "ru_send ru_write ru_reply ru_contact ru_tell",
        r"(?<!\w)(?P<v>(?i:напиш(?:и|ите)|ответь"
        r"|позвони|сообщи|отправь|перешли|скинь"
        r"|набери|маякни|напомни|пригласи"
        r"|поблагодари))\s+[А-ЯЁ][а-яё]+",
        cased=True,
        anchored=True,
    ),
    # a named channel is enough: "скинь павлу ссылку в whatsapp" must not depend on a capital letter
    *both((MSG,), "ru_send ru_tell", rf"{RECIP_RU}|{MESSAGES}|{RECIP}|{CHANNEL}", 4),
    *both((MSG,), "ru_write", rf"{RECIP_RU}|{CHANNEL}", 3),
    vo((MSG,), "ru_reply", rf"{RECIP_RU}|{MESSAGES}|на\s+(?:отзыв\w*|комментари\w*|тикет\w*|обращени\w*)", 3),
    verb((MSG,), "ru_contact"),
    verb((MSG,), "ru_post"),
    vo((MSG,), "ru_publish", rf"пост\w*|стать\w*|новост\w*|анонс\w*|твит\w*|тред\w*|{CHANNEL}", 4),
    vo((MSG,), "ru_do", r"рассылк\w*|обзвон\w*", 2),
    # any SMS at all: the person's standing rule is "never re-enable SMS without my approval"
    # a name ("the sms-gateway service", "sms.txt", "twilio_client.py") is a thing, not a message
    lit(
        (SMS,),
        "sms send",
        # atomic: "sms_templates.txt" may not be read as "sms_template" followed by "s.txt"
        rf"(?<![\w./-])(?>sms[^\W_]*|смс\w*|эсэмэс\w*|twilio|твилио|imessage)(?![_./]\w|-{_NAMED})"
        + SMS_THING
        + r"|text(?:\s+|-)messag\w*|текстов\w*\s+сообщени\w*"
        r"|(?:send|shoot|fire\s+off|drop)(?:ing)?\s+(?:me\s+|us\s+|him\s+|her\s+"
        r"|them\s+)?(?:a\s+"
        r"|an\s+)?(?:texts?|txt)(?!\w)",
    ),
    # "text the plumber", "please text me" (not "the text editor")
    _rule(
        (SMS,),
        "sms",
        r"(?<![\w./-])(?:text|txt)(?:ing)?\s+(?:(?:the|our|my|all|every)\s+)?(?!(?:file|editor"
        r"|box"
        r"|field|input|area|block|content|mode|search|colou?r|size|style|widget|format|wrap|node|diff"
        r"|output"
        r"|of)(?!\w))[\w@+]",
        negatable=False,
        anchored=True,
        imperative=True,
    ),
    # spending money
    lit(
        (SPEND,),
        "cmd",
        r"stripe\s+(?:charges|payment_intents|subscriptions|invoices|payouts|transfers"
        r"|refunds|topups)\s+(?:create|pay|confirm|capture)",
    ),
    verb((SPEND,), "buy"),
    verb(
        (SPEND,),
        "pay",
        r"(?!\s+(?:attention|close\s+attention|heed|off|of|ahead|forward|in\s+charge"
        r"|up\s+the"
        r"|my\s+phone|the\s+(?:phone|laptop|battery)|batter(?:y|ies)|customers?|users?"
        r"|clients?"
        r"|plans?|tiers?|accounts?|subscribers?|page|endpoint|flow|status|webhook|logs?"
        r"|errors?|button|screen|details)(?!\w))",
    ),
    vo(
        (SPEND,),
        "order",
        r"(?:a|an|some|more|new|another|extra|second|\d+)|money|funds|credits?|[$€£]\s*\d+"
        r"|domains?|vps|droplets?|instances?|gpus?|ec2|seats?|licen[cs]es?"
        r"|(?:cloud|paid|dedicated|extra|second|another)\s+\w+",
        3,
    ),
    vo(
        (SPEND,),
        "install rotate raise",
        r"(?:plans?|tiers?|subscriptions?|accounts?|licen[cs]es?|seats?"
        r"|memberships?|domains?|hosting)(?!\s+(?:docs?|pages?))"
        r"|to\s+(?:the\s+)?(?:pro|premium|paid|business|enterprise|team|plus"
        r"|max|growth|scale)",
        5,
    ),
    vo(
        (SPEND,),
        "subscribe",
        r"(?:to\s+)?(?!(?:the\s+)?(?:events?|topics?|channels?|signals?|observables?"
        r"|streams?|queues?|webhooks?|callbacks?|handlers?|listeners?|hooks?|updates?"
        r"|changes?)(?!\w))\S+",
        0,
    ),
    vo(
        (SPEND,),
        "raise add install",
        r"(?:spend|spending|budget|credit)\s+(?:limits?|caps?)|seats?(?!\s+(?:maps?|pickers?|selection|components?|layouts?|charts?|numbers?|belts?))"
        r"|licen[cs]es?"
        r"|credits?",
        3,
    ),
    vo((SPEND,), "invoice", RECIP, 2),
    vo(
        (SPEND,),
        "get",
        r"(?:a|an|another|second|new|extra|more|\d+)\s+(?:\S+\s+){0,2}(?:servers?|box(?:es)?"
        r"|vps|instances?|machines?|droplets?|domains?|licen[cs]es?|seats?|subscriptions?"
        r"|gpus?|credits?)",
        1,
    ),
    verb((SPEND,), "ru_buy"),
    *both((SPEND,), "ru_money ru_raise ru_do ru_set", MONEY_RU, 4),
    # changes to system files, units, cron, sudoers and the daemon's own config
    lit(
        (SYS,),
        "cmd install",
        r"systemctl\s+(?:--?[\w-]+\s+)*(?:edit|enable|disable|mask|unmask|link|revert"
        r"|set-property|daemon-reload|preset|reenable|add-wants|add-requires)(?!\w)"
        r"|launchctl\s+(?:load|unload|bootstrap|bootout|enable|disable|remove|submit)"
        r"|crontab\s+(?:-u\s+\S+\s+)?(?:-[er]|[\w.~-]+\.\w+|/\S+|~/\S+)|visudo"
        r"|ufw\s+(?:allow|deny|reject|limit|delete|insert|enable|disable|reset)"
        r"|iptables\s+-[aidfxnrp]|sysctl\s+-w|useradd|userdel|usermod|groupadd"
        r"|update-alternatives"
        rf"|(?:chmod|chown|chgrp|sed\s+-i\S*)\s[^\n;|&]*?{SYSPATH}|(?<!\w)(?:cp|mv|ln|rsync|install"
        rf"|dd)\s[^\n;|&]*?\s{SYSPATH}\s*(?:$|[;|&\n`'\"])",
    ),
    lit((SYS,), "sysp", rf"(?:>>?|(?<!\w)tee(?:\s+-a)?)\s*{SYSPATH}", reach=40),
    *both(
        (SYS,),
        "change add write overwrite create install setup set enable move rm del fix raise apply",
        SYS_FILES,
        6,
    ),
    vo(
        (SYS,),
        "change add write overwrite create install setup set enable move rm del fix raise apply",
        UNIT_FILE,
        6,
    ),
    _rule((SYS,), "pp_chg pp_del", rf"(?<!\w)(?:{union([SYS_FILES])})" + _PASSIVE + _verb("pp_chg pp_del")),
    _rule((SYS,), "pp_chg pp_del", _CAUSE + rf"(?:{SYS_FILES}){_AFTER_OBJ}" + _verb("pp_chg pp_del")),
    *both((SYS,), "ru_change ru_add ru_create ru_set ru_fix ru_del ru_rm ru_raise", SYS_FILES, 4),
    vo((SYS,), "ru_change ru_add ru_create ru_set ru_fix ru_del ru_rm ru_raise", UNIT_FILE, 4),
)


_MASKS: dict[frozenset[str], tuple[int, int]] = {}  # memo: groups -> bitmasks of (all, literal) rule indexes


def _masks(groups: frozenset[str]) -> tuple[int, int]:
    """Which rules a trigger word can start, as bitmasks: all of them, and only the literal ones."""
    found = _MASKS.get(groups)
    if found is None:
        every = sum(1 << i for i, r in enumerate(RULES) if r.triggers & groups)
        found = _MASKS[groups] = (
            every,
            sum(1 << i for i, r in enumerate(RULES) if every >> i & 1 and not r.negatable),
        )
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
        if every != literal and (
            negated(low, start, end) or talked_about(low, start) or (english and noun_use(low, start, end))
        ):
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


_NO_SMS = re.compile(
    r"(?<!\w)(?:don't|do\s+not|never|не)\s+(?:send|text|отправля\w*|шли|посыла\w*|слать)\w*"
    r"(?:\s+[^\s.;!?]+){0,2}\s+$"
)


def _accept(rule: Rule, low: str, m: re.Match[str]) -> bool:
    """A verb phrase counts unless its verb is negated or is an English noun ("the delete endpoint"), or
    the phrase is only mentioned, asked about, or an edit inside a text file."""
    if rule.imperative and not imperative_at(low, m.start()):
        return False
    if asks_about(low, m.start()) or mentioned(low, m.start(), m.group(0)) or quoted(low, m.start(), m.end()):
        return False
    if SMS in rule.classes and _NO_SMS.search(low, max(0, m.start() - 60), m.start()):
        return False  # "не отправляй никому смс", "don't send any sms": the person's own rule, said
    if SMS in rule.classes and talked_about(low, m.start()):
        return False  # "look up how to send SMS with Twilio": the topic, not the act
    if DEL in rule.classes and inside_a_file(low, m.start()):
        return False
    if not rule.negatable or "v" not in rule.pattern.groupindex:
        return True
    start, end = m.span("v")
    if negated(low, start, end) or talked_about(low, start):
        return False
    return not (low[start : start + 1].isascii() and noun_use(low, start, end))
