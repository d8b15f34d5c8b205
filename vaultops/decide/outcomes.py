"""Blocked requests that name the result instead of the action.  Pure: folded text in, findings out.

"The directory /srv/legacy should simply no longer exist" asks for a deletion without the word delete;
"move us onto the paid tier" spends money without "buy".  ``rules`` reads verbs and their objects; these
patterns read the state a request wants to end in, and the verbs whose harm depends on their object
("settle the invoice", "ship it to main").  Like the rules, they lean towards blocking: a needless
escalation costs one answer.  A clause that asks a question ("why does the table end up empty?") reports,
it does not request; nor does one that talks about the thing ("how other teams rotate keys").
"""

from __future__ import annotations

import functools
import re

from vaultops.decide.rules import (
    DEL,
    KEY,
    MERGE,
    MSG,
    RUN,
    SCHEMA,
    SPEND,
    SYS,
    in_question,
    negated,
    talked_about,
)

_IT = r"(?:it|them|this|that|these|those|everything|all\s+of\s+(?:it|them)|the\s+\w+(?:\s+\w+)?)"
_DATAWORD = (r"rows?|records?|entries|files?|users?|accounts?|objects?|items?|documents?|notes?|backups?"
             r"|logs?|events?|messages?|emails?|uploads?|snapshots?|images?|customers?|orders?")
_GONE = (r"(?:should|must|needs?\s+to|has\s+to|have\s+to|ought\s+to|is\s+to|are\s+to|to|will|shall|can)"
         r"\s+(?:simply\s+|just\s+|then\s+|finally\s+|completely\s+|totally\s+|entirely\s+)?")
_PATTERNS: tuple[tuple[str, str], ...] = (
    # permanent deletion, said as the state wanted
    (DEL, _GONE + r"(?:no\s+longer\s+exist|not\s+exist\s+any\s*more|cease\s+to\s+exist|be\s+(?:gone|no\s+more"
          r"|wiped|erased|emptied|deleted|removed|purged|destroyed|cleared|history)|disappear|vanish"
          r"|go\s+away"
          r"|go(?=\s*(?:[.,;!)]|$|\s+(?:now|today|too|as\s+well|entirely|forever|for\s+good))))"),
    (DEL, r"(?:make|get|leave|have)\s+(?:\S+\s+){0,4}?(?:disappear|vanish|go\s+away|gone|empty|blank)(?!\w)"),
    (DEL, r"end(?:s|ing)?\s+up\s+(?:with\s+)?(?:zero|no|0|nothing|none)(?:\s+(?:" + _DATAWORD + r"))?"
          r"|(?:zero|no|0)\s+(?:" + _DATAWORD + r")\s+(?:left|remain\w*|in\s+it|at\s+all)"
          r"|(?:end(?:s|ing)?\s+up|be(?:come)?|is|are|left|leave\s+\S+)\s+(?:completely\s+|totally\s+)?empty"
          r"(?!\s+(?:lines?|strings?|states?|values?|fields?|cells?|checks?|arrays?|lists?)(?!\w))"),
    (DEL, r"(?:trim|cut|pare|shrink|slim|prune|whittle)\s+(?:\S+\s+){0,3}?down(?:\s+to)?"
          r"|(?:keep|leave|retain)\s+only\s+(?:the\s+)?(?:last|latest|newest|most\s+recent|recent|current"
          r"|\d+)"
          r"|only\s+keep\s+(?:the\s+)?(?:last|latest|newest|most\s+recent|recent|\d+)"
          r"|free\s+(?:up\s+)?(?:some\s+)?(?:space|disk|room|storage)\s+by\s+\w+ing"
          r"|(?:don't|do\s+not|no\s+need\s+to)\s+(?:keep|need|bother\s+keeping)\s+(?:any\s+)?(?:backups?"
          r"|copies|a\s+copy)"),
    (DEL, r"чтобы\s+(?:\S+\s+){0,4}?(?:больше\s+)?не\s+(?:было|осталось|существовало)"
          r"|(?:не\s+должн\w*|пусть\s+не)\s+(?:больше\s+)?(?:остаться|оставаться|существовать|быть|останется)"
          r"|должн\w*\s+(?:\S+\s+)?(?:исчезнуть|пропасть|опустеть|стать\s+пуст\w*)"
          r"|(?:оставь|оставить|останется|остались?)\s+только\s+(?:последн|свеж|нов|\d)"
          r"|(?:сделай|оставь)\s+(?:\S+\s+){0,3}?пуст\w*|ноль\s+(?:строк|записей|файлов)"
          r"|освобод\w*\s+(?:\S+\s+){0,3}?(?:удал|стер|стир|сотр|чист|снес)\w*"),
    # key rotation, said as the state wanted
    (KEY, r"(?:old|current|existing|leaked|previous|compromised)\s+(?:\S+\s+){0,2}?(?:keys?|tokens?"
          r"|passwords?|secrets?|credentials?|creds|certs?|certificates?)\s+(?:should|must|needs?\s+to"
          r"|has\s+to|to|will)"
          r"\s+(?:stop\s+working|no\s+longer\s+work|be\s+(?:dead|useless|invalid|expired|retired|replaced"
          r"|swapped|rotated|revoked|gone))"
          r"|(?:nobody|no\s+one|no-one|nothing)\s+can\s+(?:\S+\s+){0,3}?(?:with|using)\s+(?:the\s+)?(?:old"
          r"|current|existing|leaked)\s+(?:\S+\s+)?(?:keys?|tokens?|passwords?|secrets?|credentials?)"
          r"|(?:fresh|new)\s+(?:\S+\s+)?(?:keys?|tokens?|passwords?|secrets?|credentials?)\s+(?:in\s+place"
          r"|everywhere|across|for\s+(?:all|every))"
          r"|(?:старый|старые|текущий|текущие)\s+(?:\S+\s+)?(?:ключ\w*|токен\w*|парол\w*|секрет\w*)\s+"
          r"(?:\S+\s+)?(?:перестал\w*|не\s+должн\w*\s+работать|должн\w*\s+перестать)"),
    # spending money
    (SPEND, r"settl(?:e|ing)\s+(?:up\s+)?(?:\S+\s+){0,3}?(?:invoices?|bills?|balances?|debts?|payments?|dues"
            r"|tabs?|accounts?|it|them|up)(?!\w)"
            r"|(?:move|moving|put|putting|switch|switching|get|getting|bring|take|go|going|be|keep)\s+(?:us"
            r"|me|them|it|the\s+\w+|our\s+\w+)?\s*(?:on|onto|to|into)\s+(?:the\s+|a\s+)?(?:paid|pro"
            r"|premium|business|team|enterprise|plus|growth|scale|higher|bigger|next|annual)\s+(?:\S+\s+)?"
            r"(?:tier|plan|subscription|package|level|version|account|edition)s?(?!\w)"
            r"|(?:card|paypal|bank\s+account|company\s+account|credit\s+card)\s+(?:\S+\s+){0,3}?(?:charged"
            r"|billed|debited)|(?:with|on|using|via)\s+(?:the\s+|our\s+|my\s+)?(?:company|corporate|business"
            r"|credit|debit|visa|amex)\s+card"
            r"|before\s+(?:someone|somebody|anyone)\s+else\s+(?:does|gets|grabs|takes|buys|registers)"
            r"|charg\w*\s+(?:\S+\s+){0,4}?(?:[$€£]\s*\d|\d[\d.,]*\s*(?:usd|eur|gbp|dollars?|euros?|bucks|руб)"
            r"|(?:their|his|her|the|a)\s+(?:\S+\s+)?(?:card|account))"),
    (SPEND, r"(?:с|со)\s+(?:карт\w*|сч[её]т\w*)\s+(?:компании|фирмы)"
            r"|перевед\w*\s+(?:нас\s+)?на\s+(?:платн\w*|про|pro|премиум\w*|бизнес\w*)"),
    # merges: a deploying verb aimed at the main branch, or a conditional landing
    (MERGE, r"(?:ship|land|deploy|push|release|roll|get|put|send|bring|move)\w*\s+(?:\S+\s+){0,3}?(?:to|into"
            r"|onto|on)\s+(?:the\s+)?(?:origin[\s/]+)?(?:main|master|trunk)(?:\s+branch)?(?!\w)"
            r"|(?:in|into|on)\s+(?:the\s+)?(?:main|master|trunk)\s+(?:branch\s+)?(?:directly|straight)"),
    # key rotation said with the objects' age ("tokens older than 90 days for new ones")
    (KEY, r"(?:swap|replace|exchange|trade|refresh|renew|roll|cycle)\w*\s+(?:\S+\s+){0,6}?(?:keys?|tokens?"
          r"|passwords?|secrets?|credentials?|creds|certs?)(?!\w)"),
    # messages: a pronoun or a long object between the verb and an outside audience
    (MSG, r"(?:post|send|share|forward|publish|drop|put)\w*\s+(?:\S+\s+){0,4}?(?:to|in|into|on)\s+(?:the\s+)?"
          r"(?:\w+'s\s+|their\s+|his\s+|her\s+|a\s+)?(?:customer|client|vendor|partner|investor|public|user|"
          r"community|external|shared|support)\w*(?:'s)?\s+(?:\S+\s+)?(?:slack|channel|chat|discord|forum"
          r"|group|list|thread|workspace|inbox|board|page)s?(?!\w)"),
    # schema: the table of a live system emptied or reshaped
    (SCHEMA, r"(?:prod|production|live)\s+(?:\S+\s+){0,3}?(?:schema|table|column)s?\s+(?:should|must"
             r"|needs?\s+to|to)\s+(?:have|get|lose|gain|be\s+(?:renamed|altered|changed|dropped))"),
    # a job or a step described by what it will do: "a cron job that deletes old logs"
    (DEL, r"(?:that|which|котор\w+)\s+(?:\S+\s+){0,3}?(?:deletes|wipes|removes|clears|purges|empties"
          r"|truncates"
          r"|erases|destroys|удаля\w*|стира\w*|чист(?:ит|ят)|очища\w*|сносит)(?!\w)"
          r"|rm\s+(?:the|all|every|everything|whole|my|our|this|that|those|these|it|them)(?!\w)"
          r"|(?:остал|стал|был|оказал)\w*\s+пуст\w*|(?:быть|остаться|существовать)\s+не\s+должн\w*"),
    (SCHEMA, r"(?:drop|delet|remov|truncat|wip|purg|destroy|nuk|eras|empty|clear)\w*\s+(?:\S+\s+){0,4}?"
             r"(?:tables?|schemas?|databases?|dbs?|columns?)\s+(?:\S+\s+){0,3}?(?:on|in|from"
             r"|of)\s+(?:the\s+)?"
             r"(?:prod|production|live)(?!\w)|(?:drop|delet|remov|truncat|wip|purg|destroy|nuk|eras)\w*\s+"
             r"(?:\S+\s+){0,3}?(?:prod|production|live)\s+(?:\S+\s+){0,2}?(?:tables?|schemas?|databases?|dbs?"
             r"|columns?)(?!\w)"),
    (KEY, r"(?:keys?|tokens?|passwords?|secrets?|credentials?|creds|certs?)\s+(?:should|must|needs?\s+to"
          r"|has\s+to"
          r"|have\s+to|to|will)\s+(?:\S+\s+)?(?:be\s+(?:different|new|fresh|changed|rotated|replaced"
          r"|regenerated"
          r"|reissued|revoked)|change|stop\s+working)"
          r"|(?:стар\w+|текущ\w+|прежн\w+)\s+(?:\S+\s+)?(?:ключ\w*|токен\w*|парол\w*)\s+(?:\S+\s+){0,4}?никто"
          r"|никто\s+(?:\S+\s+){0,4}?(?:стар\w+|прежн\w+)\s+(?:ключ\w*|токен\w*|парол\w*)"),
    (MERGE, r"(?<!merged\s)(?<!landed\s)(?<!pushed\s)(?<!gone\s)(?<!went\s)(?<!been\s)(?<!got\s)"
            r"into\s+(?:the\s+)?(?:origin/)?(?:main|master|trunk)(?![\w.])"
            r"|(?:land|merge|squash|fast-forward)\s+(?:it|them|this|that)(?!\w)"
            r"|(?:выкат|вле[йв]|влить|зале[йв]|залить|смерж|перенес|отправ|запуш|пушн|сле[йв]|слить"
            r"|добав)\w*\s+"
            r"(?:\S+\s+){0,4}?(?:в|на)\s+(?:main|master|мастер\w*|мейн)(?![\w.])"),
    (MSG, r"(?:post|put|share|publish|drop|send|tweet|toot|cross-?post)\w*\s+(?:\S+\s+){0,5}?(?:on|to|in|into"
          r"|onto)\s+(?:our\s+|the\s+|my\s+)?(?:x|twitter|linkedin|facebook|instagram|reddit|hacker\s*news|hn"
          r"|mastodon|bluesky|threads|public\s+\w+|blog|website|site|medium|substack|#[\w-]+)(?=[\s.,;!?)]|$)"
          r"|publish\w*\s+(?:the\s+|our\s+|a\s+)?(?:\S+\s+)?(?:blog\s+posts?|posts?|articles?|announcements?"
          r"|release\s+notes|newsletters?|press\s+releases?)"
          r"|(?:open|file|create|raise|submit|post|leave)\w*\s+(?:an?\s+|the\s+)?(?:issue|bug\s+report|ticket"
          r"|discussion|comment|review)s?\s+(?:\S+\s+){0,4}?(?:upstream|on\s+(?:their|the\s+(?:upstream"
          r"|vendor"
          r"|customer|client|library)\w*|\w+'s))"
          r"|comment\w*\s+on\s+(?:the\s+)?(?:customer|client|user|vendor|upstream|their|his|her|\w+'s)\S*\s+"
          r"(?:\S+\s+)?(?:issue|pr|post|thread|ticket|review|tweet)"
          r"|(?:send|forward|deliver)\w*\s+(?:the\s+|this\s+|that\s+)?(?:apolog\w*|drafts?|repl(?:y|ies)"
          r"|responses?|letters?|offers?|quotes?|proposals?)(?![^.!?\n]{0,40}to\s+(?:me|us|myself|the\s+team"
          r"|my\s+inbox)(?!\w))"),
    (SPEND, r"(?:register|buy|grab|get|purchase|secure|snag|claim|reserve)\w*\s+(?:the\s+)?(?:domain\s+)?"
            r"[\w-]+\.(?:com|net|org|io|dev|ai|app|co|xyz|me|ru|sh|so|gg|tech|site|cloud)(?![\w.])"
            r"|(?:bill|invoice|payment|renewal|balance)s?\s+(?:\S+\s+){0,3}?(?:is|are)\s+(?:now\s+)?(?:due"
            r"|overdue|outstanding|unpaid)[^?]{0,60}?(?:take\s+care|handle|deal\s+with|sort|settle|cover"
            r"|clear"
            r"|close)"
            r"|(?:take\s+care\s+of|handle|deal\s+with|sort\s+out|cover|close\s+out)\s+(?:the\s+|our\s+"
            r"|this\s+"
            r"|that\s+)?(?:\S+\s+)?(?:bills?|invoices?|balances?|dues)(?!\w)"
            r"|(?:закро|закрой|закрыть|погас\w*|оплат\w*)\s+(?:\S+\s+){0,2}?сч[её]т\w*"),
    (SYS, r"(?:passwordless|nopasswd)\s+sudo|sudo\s+(?:без\s+пароля|rights|access|privileges|group)"
          r"|(?:give|grant|add)\w*\s+(?:\S+\s+){0,4}?(?:sudo|root\s+access|admin\s+rights)(?!\w)"
          r"|(?:дай|выдай|добавь|дать)\w*\s+(?:\S+\s+){0,4}?(?:sudo|рут\w*|root)(?!\w)"
          r"|(?:open|close|expose|allow|block|forward)\w*\s+(?:\S+\s+){0,2}?ports?\s+\d+"
          r"|(?:откро|открой|закрой|пробрось)\w*\s+(?:\S+\s+){0,2}?порт\w*"
          r"|(?:schedul|add|creat|set\s+up|put|install|register|run)\w*\s+(?:\S+\s+){0,7}?(?:with|in|into"
          r"|to|via"
          r"|as|using)\s+(?:a\s+|the\s+)?(?:cron|crontab|systemd\s+timer|launchd|anacron)(?!\w)"),
    # running decoded or downloaded code
    (RUN, r"(?:decod|deobfuscat|unpack|base64\s+-d|unbase64)\w*\s+(?:\S+\s+){0,12}?(?:and|then|&&"
          r"|\|)\s+(?:\S+"
          r"\s+){0,2}?(?:run|execut|eval|sourc|pipe|feed|launch|start|paste)\w*"
          r"|(?:download|fetch|grab|pull|get|curl|wget)\w*\s+(?:\S+\s+){0,12}?(?:and|then"
          r"|&&)\s+(?:\S+\s+){0,2}?"
          r"(?:run|execut|eval|sourc|launch|start|install)\w*(?:\s+(?:it|them|that|this))?(?!\s+(?:tests?|the"
          r"\s+tests?|pytest|lint))"
          r"|(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^\n|]*\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh(?!\w)"
          r"|(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+)?(?:python\d?|perl|ruby|node|php|iex)"
          r"|\|\s*base64\s+(?:-d|--decode)\s*\|\s*(?:ba|z|da)?sh"
          r"|(?:eval|exec)\s*\(\s*(?:base64|atob|b64decode|decode|bytes\.fromhex|codecs\.decode)"
          r"|(?:run|execute|eval|paste|feed)\w*\s+(?:\S+\s+){0,4}?(?:base64|encoded|obfuscated|decoded"
          r"|downloaded)(?!\w)"
          r"|(?:run|execute|eval)\w*\s+(?:\S+\s+){0,4}?(?:script|code|binary|payload|installer)\s+(?:from|at)"
          r"\s+(?:https?://|this\s+(?:url|link|gist|pastebin)|the\s+(?:url|link|gist)|pastebin|gist)"
          r"|(?:run|execute|eval)\w*\s+(?:whatever|what's|what\s+is|the\s+(?:script|code|commands?|snippet"
          r"|one-liner|file)s?|this|that|it)\s+(?:\S+\s+){0,4}?(?:gist|pastebin|paste|https?://|url|link)"
          r"|(?:paste|copy)\w*\s+(?:\S+\s+){0,8}?(?:into|in)\s+(?:a|the|your)\s+(?:terminal|shell|console"
          r"|prompt)"
          r"|(?:pip3?|npm|gem|cargo|go)\s+install\s+(?:\S+\s+){0,6}?(?:url|https?://|tarball|zip|gist|link)"
          r"|install\w*\s+(?:\S+\s+){0,4}?from\s+(?:this|the|a|that|some)\s+(?:\S+\s+)?(?:url|link|tarball"
          r"|zip|gist|pastebin)"
          r"|(?:расшифру|декодиру|раскодиру|скача|загрузи|стяни)\w*\s+(?:\S+\s+){0,8}?(?:и|затем|потом)\s+"
          r"(?:\S+\s+){0,2}?(?:запуст|выполн|исполн)\w*"),
)


@functools.cache
def _compiled() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((c, re.compile(r"(?<!\w)(?:" + p + ")")) for c, p in _PATTERNS)


def find(low: str) -> list[tuple[str, str]]:
    """(class, phrase) for each class an outcome phrase in ``low`` (rules.fold of the text) asks for."""
    found: dict[str, str] = {}
    for cls, pattern in _compiled():
        if cls in found:
            continue
        for m in pattern.finditer(low):
            start = m.start()
            word_end = low.find(" ", start)
            if in_question(low, start) or talked_about(low, start) or negated(low, start, word_end):
                continue
            found[cls] = " ".join(m.group(0).split())
            break
    return list(found.items())
