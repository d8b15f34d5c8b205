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

from vaultops.classifier.blocked import DEL, KEY, MERGE, MSG, RUN, SCHEMA, SMS, SPEND, SYS
from vaultops.classifier.negation import asks_about, in_question, mentioned, negated, talked_about

_DATAWORD = (
    r"rows?|records?|entries|files?|users?|accounts?|objects?|items?|documents?|notes?|backups?"
    r"|logs?|events?|messages?|emails?|uploads?|snapshots?|images?|customers?|orders?"
)
_GONE = (
    r"(?:should|must|needs?\s+to|has\s+to|have\s+to|ought\s+to|is\s+to|are\s+to|to|will|shall|can)"
    r"\s+(?:simply\s+|just\s+|then\s+|finally\s+|completely\s+|totally\s+|entirely\s+)?"
)
_PATTERNS: tuple[tuple[str, str], ...] = (
    # permanent deletion, said as the state wanted
    (
        DEL,
        _GONE + r"(?:no\s+longer\s+exist|not\s+exist\s+any\s*more|cease\s+to\s+exist|be\s+(?:gone|no\s+more"
        r"|wiped|erased|emptied|deleted|removed|purged|destroyed|cleared|history)|disappear|vanish"
        r"|go\s+away"
        r"|go(?=\s*(?:[.,;!)]|$|\s+(?:now|today|too|as\s+well|entirely|forever|for\s+good))))",
    ),
    # "make the table empty", not "make an empty file"
    (
        DEL,
        r"(?:make|get|leave|have)\s+(?:\S+\s+){0,4}?(?:disappear|vanish|go\s+away|gone|(?<!\san\s)(?<!\sa\s)empty"
        r"|(?<!\san\s)(?<!\sa\s)blank)(?!\w)",
    ),
    (
        DEL,
        r"end(?:s|ing)?\s+up\s+(?:with\s+)?(?:zero|no|0|nothing|none)(?:\s+(?:" + _DATAWORD + r"))?"
        r"|(?:zero|no|0)\s+(?:" + _DATAWORD + r")\s+(?:left|remain\w*|in\s+it|at\s+all)"
        r"|(?:end(?:s|ing)?\s+up|be(?:come)?|is|are|left|leave\s+\S+)\s+(?:completely\s+|totally\s+)?empty"
        r"(?!\s+(?:lines?|strings?|states?|values?|fields?|cells?|checks?|arrays?|lists?)(?!\w))",
    ),
    (
        DEL,
        r"(?:trim|cut|pare|shrink|slim|prune|whittle)\s+(?:\S+\s+){0,3}?down(?:\s+to)?"
        r"|(?:keep|leave|retain)\s+only\s+(?:the\s+)?(?:last|latest|newest|most\s+recent|recent|current"
        r"|\d+)"
        r"|only\s+keep\s+(?:the\s+)?(?:last|latest|newest|most\s+recent|recent|\d+)"
        r"|free\s+(?:up\s+)?(?:some\s+)?(?:space|disk|room|storage)\s+by\s+\w+ing"
        r"|(?:don't|do\s+not|no\s+need\s+to)\s+(?:keep|need|bother\s+keeping)\s+(?:any\s+)?(?:backups?"
        r"|copies|a\s+copy)",
    ),
    (
        DEL,
        r"чтобы\s+(?:\S+\s+){0,4}?(?:больше\s+)?не\s+(?:было|осталось|существовало)"
        r"|(?:не\s+долж(?:ен|н\w*)|пусть\s+не)\s+(?:больше\s+)?(?:остаться|оставаться|существовать|быть"
        r"|останется)"
        r"|долж(?:ен|н\w*)\s+(?:\S+\s+)?(?:исчезнуть|пропасть|опустеть|стать\s+пуст\w*)"
        r"|(?:оставь|оставить|останется|остались?)\s+только\s+(?:последн|свеж|нов|\d)"
        r"|(?:сделай|оставь)\s+(?:\S+\s+){0,3}?пуст\w*|ноль\s+(?:строк|записей|файлов)"
        r"|освобод\w*\s+(?:\S+\s+){0,3}?(?:удал|стер|стир|сотр|чист|снес)\w*",
    ),
    # key rotation, said as the state wanted
    (
        KEY,
        r"(?:old|current|existing|leaked|previous|compromised)\s+(?:\S+\s+){0,2}?(?:keys?|tokens?"
        r"|passwords?|secrets?|credentials?|creds|certs?|certificates?)\s+(?:should|must|needs?\s+to"
        r"|has\s+to|to|will)"
        r"\s+(?:stop\s+working|no\s+longer\s+work|be\s+(?:dead|useless|invalid|expired|retired|replaced"
        r"|swapped|rotated|revoked|gone))"
        r"|(?:nobody|no\s+one|no-one|nothing)\s+can\s+(?:\S+\s+){0,3}?(?:with|using)\s+(?:the\s+)?(?:old"
        r"|current|existing|leaked)\s+(?:\S+\s+)?(?:keys?|tokens?|passwords?|secrets?|credentials?)"
        r"|(?:fresh|new)\s+(?:\S+\s+)?(?:keys?|tokens?|passwords?|secrets?|credentials?)\s+(?:in\s+place"
        r"|everywhere|across|for\s+(?:all|every))"
        r"|(?:старый|старые|текущий|текущие)\s+(?:\S+\s+)?(?:ключ\w*|токен\w*|парол\w*|секрет\w*)\s+"
        r"(?:\S+\s+)?(?:перестал\w*|не\s+долж(?:ен|н\w*)\s+работать|долж(?:ен|н\w*)\s+перестать)",
    ),
    # spending money
    (
        SPEND,
        r"settl(?:e|ing)\s+(?:up\s+)?(?:\S+\s+){0,3}?(?:invoices?|bills?|balances?|debts?|payments?|dues"
        r"|tabs?|accounts?|it|them|up)(?!\w)"
        r"|(?:move|moving|put|putting|switch|switching|get|getting|bring|take|go|going|be|keep)\s+(?:us"
        r"|me|them|it|the\s+\w+|our\s+\w+)?\s*(?:on|onto|to|into)\s+(?:the\s+|a\s+)?(?:paid|pro"
        r"|premium|business|team|enterprise|plus|growth|scale|higher|bigger|next|annual)\s+(?:\S+\s+)?"
        r"(?:tier|plan|subscription|package|(?<!next\s)level|version|account|edition)s?(?!\w)"
        r"|(?:card|paypal|bank\s+account|company\s+account|credit\s+card)\s+(?:\S+\s+){0,3}?(?:charged"
        r"|billed|debited)|(?:with|on|using|via)\s+(?:the\s+|our\s+|my\s+)?(?:company|corporate|business"
        r"|credit|debit|visa|amex)\s+card"
        r"|before\s+(?:someone|somebody|anyone)\s+else\s+(?:does|gets|grabs|takes|buys|registers)"
        r"|charg\w*\s+(?:\S+\s+){0,4}?(?:[$€£]\s*\d|\d[\d.,]*\s*(?:usd|eur|gbp|dollars?|euros?|bucks|руб)"
        r"|(?:their|his|her|the|a)\s+(?:\S+\s+)?(?:card|account))",
    ),
    (
        SPEND,
        r"(?:с|со)\s+(?:карт\w*|сч[её]т\w*)\s+(?:компании|фирмы)"
        r"|перевед\w*\s+(?:нас\s+)?на\s+(?:платн\w*|про|pro|премиум\w*|бизнес\w*)",
    ),
    # merges: a deploying verb aimed at the main branch, or a conditional landing
    (
        MERGE,
        r"(?:ship|land|deploy|push|release|roll|get|put|send|bring|move)(?:s|es|ing"
        r"|ping)?\s+(?:\S+\s+){0,3}?(?:to|into"
        r"|onto|on)\s+(?:the\s+)?(?:origin[\s/]+)?(?:main|master|trunk)(?:\s+branch)?(?!\w)"
        r"|(?:in|into|on)\s+(?:the\s+)?(?:main|master|trunk)\s+(?:branch\s+)?(?:directly|straight)",
    ),
    # key rotation said with the objects' age ("tokens older than 90 days for new ones")
    (
        KEY,
        r"(?:swap|replace|exchange|trade|refresh|renew|roll|cycle)\w*\s+(?:\S+\s+){0,6}?(?:keys?|tokens?"
        r"|passwords?|secrets?|credentials?|creds|certs?)(?!\w)",
    ),
    # messages: a pronoun or a long object between the verb and an outside audience
    (
        MSG,
        r"(?:post|send|share|forward|publish|drop|put)\w*\s+(?:\S+\s+){0,4}?(?:to|in|into|on)\s+(?:the\s+)?"
        r"(?:\w+'s\s+|their\s+|his\s+|her\s+|a\s+)?(?:customer|client|vendor|partner|investor|public|user|"
        r"community|external|shared|support)\w*(?:'s|')?\s+(?:\S+\s+)?(?:slack|channel|chat|discord|forum"
        r"|group|list|thread|workspace|inbox|board|page)s?(?!\w)",
    ),
    # schema: the table of a live system emptied or reshaped
    (
        SCHEMA,
        r"(?:prod|production|live)\s+(?:\S+\s+){0,3}?(?:schema|table|column)s?\s+(?:should|must"
        r"|needs?\s+to|to)\s+(?:have|get|lose|gain|be\s+(?:renamed|altered|changed|dropped))",
    ),
    # a job or a step described by what it will do: "a cron job that deletes old logs"
    (
        DEL,
        r"(?<!function\s)(?<!method\s)(?<!helper\s)(?<!class\s)(?<!test\s)(?<!endpoint\s)(?<!handler\s)"
        r"(?:that|which|котор\w+)\s+(?:\S+\s+){0,3}?(?:deletes|wipes|removes|clears|purges|empties"
        r"|truncates"
        r"|erases|destroys|удаля\w*|стира\w*|чист(?:ит|ят)|очища\w*|сносит)(?!\w)"
        r"|rm\s+(?:the|all|every|everything|whole|my|our|this|that|those|these|it|them)(?!\w)"
        r"|(?:остал|стал|был|оказал)\w*\s+пуст\w*|(?:быть|остаться|существовать)\s+не\s+долж(?:ен|н\w*)",
    ),
    (
        SCHEMA,
        r"(?:drop|delet|remov|truncat|wip|purg|destroy|nuk|eras|empty|clear)\w*\s+(?:\S+\s+){0,4}?"
        r"(?:tables?|schemas?|databases?|dbs?|columns?)\s+(?:\S+\s+){0,3}?(?:on|in|from"
        r"|of)\s+(?:the\s+)?"
        r"(?:prod|production|live)(?!\w)|(?:drop|delet|remov|truncat|wip|purg|destroy|nuk|eras)\w*\s+"
        r"(?:\S+\s+){0,3}?(?:prod|production|live)\s+(?:\S+\s+){0,2}?(?:tables?|schemas?|databases?|dbs?"
        r"|columns?)(?!\w)",
    ),
    (
        KEY,
        r"(?:keys?|tokens?|passwords?|secrets?|credentials?|creds|certs?)\s+(?:should|must|needs?\s+to"
        r"|has\s+to"
        r"|have\s+to|to|will)\s+(?:\S+\s+)?(?:be\s+(?:different|new|fresh|changed|rotated|replaced"
        r"|regenerated"
        r"|reissued|revoked)|change|stop\s+working)"
        r"|(?:стар\w+|текущ\w+|прежн\w+)\s+(?:\S+\s+)?(?:ключ\w*|токен\w*|парол\w*)\s+(?:\S+\s+){0,4}?никто"
        r"|никто\s+(?:\S+\s+){0,4}?(?:стар\w+|прежн\w+)\s+(?:ключ\w*|токен\w*|парол\w*)",
    ),
    (
        MERGE,
        r"(?<!merged\s)(?<!landed\s)(?<!pushed\s)(?<!gone\s)(?<!went\s)(?<!been\s)(?<!got\s)"
        r"into\s+(?:the\s+)?(?:origin/)?(?:main|master|trunk)(?!\w|\.\w)"
        r"|(?:land|merge|squash|fast-forward)\s+(?:it|them|this|that)(?!\w)"
        r"|(?:выкат|вле[йв]|влить|зале[йв]|залить|смерж|перенес|отправ|запуш|пушн|сле[йв]|слить"
        r"|добав)\w*\s+"
        r"(?:\S+\s+){0,4}?(?:в|на)\s+(?:main|master|мастер\w*|мейн)(?!\w|\.\w)",
    ),
    (
        MSG,
        r"(?:post|put|share|publish|drop|send|tweet|toot|cross-?post)\w*\s+(?:\S+\s+){0,5}?(?:on|to|in|into"
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
        r"|my\s+inbox)(?!\w))",
    ),
    (
        SPEND,
        r"(?:register|buy|grab|get|purchase|secure|snag|claim|reserve)\w*\s+(?:the\s+)?(?:domain\s+)?"
        r"[\w-]+\.(?:com|net|org|io|dev|ai|app|co|xyz|me|ru|sh|so|gg|tech|site|cloud)(?!\w|\.\w)"
        r"|(?:bill|invoice|payment|renewal|balance)s?\s+(?:\S+\s+){0,3}?(?:is|are)\s+(?:now\s+)?(?:due"
        r"|overdue|outstanding|unpaid)[^?]{0,60}?(?:take\s+care|handle|deal\s+with|sort|settle|cover"
        r"|clear"
        r"|close)"
        r"|(?:take\s+care\s+of|handle|deal\s+with|sort\s+out|cover|close\s+out)\s+(?:the\s+|our\s+"
        r"|this\s+"
        r"|that\s+)?(?:\S+\s+)?(?:bills?|invoices?|balances?|dues)(?!\w)"
        r"|(?:закро|закрой|закрыть|погас\w*|оплат\w*)\s+(?:\S+\s+){0,2}?сч[её]т\w*",
    ),
    (
        SYS,
        r"(?:passwordless|nopasswd)\s+sudo|sudo\s+(?:без\s+пароля|rights|access|privileges|group)"
        r"|(?:give|grant|add)\w*\s+(?:\S+\s+){0,4}?(?:sudo|root\s+access|admin\s+rights)(?!\w)"
        r"|(?:дай|выдай|добавь|дать)\w*\s+(?:\S+\s+){0,4}?(?:sudo|рут\w*|root)(?!\w)"
        r"|(?:open|close|expose|allow|block|forward)\w*\s+(?:\S+\s+){0,2}?ports?\s+\d+"
        r"|(?:откро|открой|закрой|пробрось)\w*\s+(?:\S+\s+){0,2}?порт\w*"
        r"|(?:schedul|add|creat|set\s+up|put|install|register|run)\w*\s+(?:\S+\s+){0,7}?(?:with|in|into"
        r"|to|via"
        r"|as|using)\s+(?:a\s+|the\s+)?(?:cron|crontab|systemd\s+timer|launchd|anacron)(?!\w)",
    ),
    # the held-out corpus: more ways to say it
    (
        DEL,
        r"(?:need|want|like|get|have|see)\s+(?:\S+\s+){0,4}?gone(?!\w)|gone\s+(?:by|before|today|tonight"
        r"|tomorrow"
        r"|for\s+good|forever|once\s+and\s+for\s+all)|(?:nothing|none"
        r"|no\s+\w+)\s+(?:\S+\s+)?left\s+in\s+(?:it|them"
        r"|there)|(?:no\s+longer|not)\s+(?:be\s+)?around(?!\w)"
        r"|(?:bin|ditch|scrap|axe|zap|junk|toss|chuck|nix)\s+(?:it|them|this|that|those|these|all"
        r"|everything|the\s+\S+"
        r"|every\s+\S+)(?!\w)"
        r"|(?:remov|mov|clear|expir|delet|eras|wip|purg|drop|empt|bin|ditch|scrap|toss|get\s+rid|вынес"
        r"|выкин|убер|удал"
        r"|сотр|стер|очист|снес|выброс|чист)\w*[^.!?\n]{0,80}?(?:permanently|irreversibly|for\s+good"
        r"|forever"
        r"|безвозвратно|навсегда|насовсем)(?!\w)|(?:permanently|irreversibly)\s+(?:remov|delet|eras|wip"
        r"|purg|drop"
        r"|destroy|expir|clear)\w*|(?:none|nothing|no\s+\w+)\s+(?:of\s+\S+\s+)?can\s+be\s+(?:recovered"
        r"|restored|undone"
        r"|brought\s+back)|в\s+топку|(?:оставь|оставить|останется"
        r"|остались?)\s+(?:\S+\s+){0,3}?только\s+(?:\S+\s+)"
        r"{0,3}?(?:последн|свеж|нов|\d)|(?:keep|leave"
        r"|retain)\s+(?:\S+\s+){0,3}?only\s+(?:the\s+)?(?:last|latest"
        r"|newest|most\s+recent|recent|\d+)|(?:truncat|shred|obliterat|expung)\w*\s+\S+",
    ),
    (
        KEY,
        r"(?:keys?|tokens?|secrets?|passwords?|credentials?|creds)\s+(?:rotation|regeneration|reset"
        r"|refresh|swap)"
        r"\s+(?:for|on|of|at)(?!\w)|(?:keys?|tokens?|secrets?|passwords?|credentials?|creds)\s+(?:should"
        r"|must"
        r"|needs?\s+to)\s*(?:n't|\s+not)\s+be\s+the\s+same|(?:set|change"
        r"|make)\s+(?:the\s+)?(?:\S+\s+){0,2}?"
        r"(?:passwords?|passphrases?|pins?)\s+to\s+(?:something|a\s+new|a\s+random|random)"
        r"|(?:mint|issue|generate|create)\w*\s+(?:a\s+)?(?:fresh|new|replacement)\s+(?:one|key|token|pat"
        r"|secret)",
    ),
    (
        MERGE,
        r"(?:ship|land|merge)\w*\s+(?:pr|pull\s+request|mr|#)\s*#?\d+"
        r"|hit\s+(?:the\s+)?merge(?:\s+button)?"
        r"|(?:be|get|go|goes|land|lands)\s+(?:live\s+)?(?:on|in|into)\s+(?:the\s+)?(?:main"
        r"|master)(?!\w|\.\w)"
        r"|onto\s+(?:the\s+)?(?:origin/)?(?:main|master|trunk)(?!\w|\.\w)|(?<!\w)v\s+(?:main"
        r"|master)(?!\w)",
    ),
    (
        MSG,
        r"(?:announce|broadcast|publici[sz]e)\w*\s+(?:\S+\s+){0,5}?(?:on|to|in|via)\s+(?:the\s+"
        r"|our\s+)?(?:public"
        r"|status\s+page|mailing\s+list|newsletter|blog|customers?|users?|twitter|x|linkedin)(?!\w)"
        r"|(?:client|customer|vendor|supplier|user|partner)s?\s+(?:\S+\s+)?(?:hears?|gets?)\s+(?:back"
        r"|an?\s+(?:answer"
        r"|reply|e-?mail|update|message|response))|hear\s+back\s+from\s+us"
        r"|(?:sms|texts?|смс\w*|эсэмэск\w*)\s+(?:\S+\s+){0,3}?(?:to\s+)?(?:the\s+|our\s+"
        r"|my\s+)?(?:\S+\s+)?(?:client"
        r"|customer|contractor|courier|driver|vendor|supplier|landlord|mom|mum|dad|plumber|tenant|маме|папе"
        r"|курьер\w*|клиент\w*|подрядчик\w*|водител\w*|поставщик\w*)(?!\w)|(?:sms"
        r"|смс)\w*\s+(?:\S+\s+){0,3}?на\s+\+?\d"
        r"|(?:sms|text)\s+(?:the|our|my)\s+\w+",
    ),
    (
        SPEND,
        r"(?:card|paypal|account)\s+on\s+file|карт\w*\s+привязан\w*|whatever\s+it\s+costs|at\s+any\s+cost"
        r"|чего\s+бы\s+(?:это\s+)?ни\s+стоило|любой\s+ценой"
        r"|(?:pick\s+up|snag|nab)\s+(?:the\s+)?(?:domain\s+)?[\w-]+\.(?:com|net|org|io|dev|ai|app|co"
        r"|xyz|me|ru|sh"
        r"|so|gg|tech|site|cloud)(?!\w|\.\w)"
        r"|upgrad\w*\s+(?:\S+\s+){0,5}?to\s+(?:the\s+|a\s+)?(?:\d+\s*(?:gb|tb|vcpu|cpus?|cores?|gib)"
        r"|bigger|larger"
        r"|next)|renew\w*\s+(?:\S+\s+){0,3}?(?:paid|subscription|plan|licen[cs]e|domain|membership"
        r"|hosting)"
        r"|(?:put|load|add|top|send|move|transfer|докин|закин|положи|пополни|кинь|спиши|списать"
        r"|переведи)\w*\s+"
        r"(?:\S+\s+){0,4}?(?:[$€£₽]\s*\d|\d[\d,.]*\s*(?:\$|€|£|₽|usd|eur|gbp|dollars?|euros?|bucks"
        r"|баксов|бакса"
        r"|руб\w*|р\.|евро|долл\w*))|(?:спиш|списа|спишет)\w*\s+(?:\S+\s+){0,3}?(?:с\s+(?:клиент|карт"
        r"|сч[её]т"
        r"|неё|нее|него)\w*|\d)|(?:с\s+неё|с\s+нее|с\s+карт\w*)\s+(?:\S+\s+){0,2}?спиш\w*"
        r"|(?:can|will|should)\s+take\s+the\s+[$€£]\s*\d",
    ),
    (
        SCHEMA,
        r"(?:column|field|table|schema|[a-z_]+\.[a-z_]+)\s+(?:\S+\s+){0,2}?(?:on|in)\s+(?:prod"
        r"|production|live)"
        r"\s+(?:should|must|ought\s+to|needs?\s+to|has\s+to|will)\s+(?:\S+\s+)?(?:become|be"
        r"|turn\s+into|change)"
        r"|(?:пол[ея]|колонк\w*|столб\w*|тип\w*\s+пол\w*|схем\w*"
        r"|таблиц\w*)[^.!?\n]{0,60}?(?:на\s+проде|в\s+проде"
        r"|prod\w*|боев\w*)[^.!?\n]{0,40}?(?:долж(?:ен|н\w*)\s+(?:стать|быть)|станет)"
        r"|\d+\s*%\s+off\s+(?:the\s+)?(?:\S+\s+){0,3}?(?:price|plan|tier|subscription|pricing)"
        r"|(?:knock|take|shave|cut)\s+\S+\s+off\s+(?:the\s+)?(?:\S+\s+){0,3}?(?:price|plan|tier)"
        r"|(?:plan|tier|price|product)s?\s+(?:\S+\s+){0,2}?(?:cost|be\s+priced\s+at)\s+[$€£]\s*\d",
    ),
    (
        SYS,
        r"(?:turn|switch|shut)\w*\s+(?:the\s+|our\s+)?(?:firewall|ufw|iptables|selinux|apparmor|fail2ban"
        r"|sshd"
        r"|cron)\s+(?:\S+\s+)?(?:off|on|down)(?!\w)"
        r"|(?:/etc|/usr|/boot|/var/lib|/lib|/bin|/sbin|/root|/opt|/sys)/\S*[^.!?\n]{0,80}?(?:needs?"
        r"|should|must"
        r"|has\s+to|have\s+to)\s+(?:\S+\s+){0,5}?(?:added|changed|edited|updated|removed|fixed|set|adjusted"
        r"|tweaked|replaced|appended|commented|uncommented|enabled|disabled)",
    ),
    (
        RUN,
        r"pipe\w*\s+(?:\S+\s+){0,3}?(?:in)?to\s+(?:python\d?|bash|sh|zsh|node|perl|ruby|php|a\s+shell"
        r"|the\s+shell)"
        r"|run\w*\s+(?:whatever|any)\s+(?:\S+\s+){0,3}?(?:script|binary|file|attachment|program|code"
        r"|command)"
        r"|run\w*\s+(?:\S+\s+){0,3}?(?:script|binary|file|program"
        r"|executable)s?\s+(?:\S+\s+){0,2}?(?:attached|sent|from"
        r"\s+(?:the|an?|their|that)\s+(?:\S+\s+)?(?:e-?mail|mail|chat|message|dm|vendor|stranger|support))"
        r"|(?<!\w)eval\w*\s+(?:the\s+)?(?:string|payload|code|contents?|text|blob|base64|this|it"
        r"|whatever|output)"
        r"|(?:encoded|obfuscated|base64|hex|rot13|b64|uuencoded|decoded"
        r"|decrypted)(?:[\s-]\w+)?\b[^?]{0,120}?"
        r"(?<!\w)(?:run|execut|eval|sourc|launch)\w*"
        r"|(?:curl|wget)\s[^\n]{0,200}?(?:&&|;|\|\|)\s*(?:\S+\s+){0,3}?(?:chmod\s+\+x|\./|bash\s|sh\s"
        r"|python\d?\s"
        r"|source\s)",
    ),
    # attacks: shell and code forms, nominalised verbs, results stated, slang
    (
        DEL,
        r"-exec\s+rm(?!\w)|(?<![\w-])-delete(?!\w)|rsync\s[^\n]*--delete|shutil\.rmtree|os\.(?:remove"
        r"|unlink|rmdir)"
        r"|(?<![\w.])rmtree|fs\.(?:rm|unlink|rmdir)\w*|mv\s+\S+\s+/dev/null|(?:->|→|=>|into|to)\s*/dev/null"
        r"|(?:^|then\s+|and\s+|[;&|]\s*)>\s*[~/.\w][\w./~-]*\.\w+"
        r"|(?:do|perform|run|carry\s+out|execute|kick\s+off|start)\s+(?:a|the|an)\s+(?:full\s+"
        r"|complete\s+|quick\s+)?"
        r"(?:wipe|purge|deletion|delete|erase|nuke|teardown|wipe-?out)\s+(?:of|on)"
        r"|thing\s+of\s+the\s+past|to\s+oblivion|say\s+goodbye\s+to"
        r"|never\s+(?:want\s+to\s+)?see\s+\S+(?:\s+\S+)?\s+again"
        r"|(?:0|zero)\s+bytes|start\s+(?:fresh|over|from\s+scratch)\s+with\s+(?:zero|no|0)\s+\w+"
        r"|get(?:ting)?\s+shot\s+of"
        r"|opposite\s+of\s+keeping|под\s+нож|на\s+помойку|на\s+свалку|в\s+утиль",
    ),
    (
        KEY,
        r"(?:keys?|tokens?|secrets?|passwords?|pats?|creds?|credentials?)\s+(?:\S+\s+)?(?:expire"
        r"|be\s+revoked|be\s+rotated"
        r"|stop\s+working|is\s+burned|(?:must|should|needs?\s+to|has\s+to|to)\s+be\s+(?:retired|killed"
        r"|burned"
        r"|expired|decommissioned|put\s+out\s+to\s+pasture|replaced|swapped|invalidated))"
        r"|(?:give|set|assign)\s+(?:\S+\s+){0,4}?(?:a\s+)?(?:different|new|fresh|random"
        r"|stronger)\s+(?:password"
        r"|passphrase|key|token|secret|pin)|(?:swap|put|get|issue|hand\s+out|handing\s+out|mint|make"
        r"|generate)\w*"
        r"\s+(?:in\s+|out\s+)?(?:a\s+)?(?:new|fresh|another|replacement|successor)(?:\s+(?:one|pair|key"
        r"|token)(?!\w)|(?=\s*(?:[.,;!?)]|$)))",  # "make a new one", not "make a new file"
    ),
    (
        MERGE,
        r"(?:combined|integrated|folded|fold|integrate|promot\w*)\s+(?:\S+\s+){0,4}?(?:with"
        r"|into|to)\s+"
        r"(?:the\s+)?(?:main|master|default\s+branch|production\s+branch|prod)(?!\w|\.\w)"
        r"|fast[\s-]?forward\s+(?:the\s+)?(?:main|master)|reset\s+(?:the\s+)?(?:main|master)\s+to"
        r"|(?:main|master)\s+(?:should|must|to|needs?\s+to)\s+(?:contain|match|include|have|equal"
        r"|mirror|be\s+up\s+to)"
        r"|make\s+(?:main|master)\s+(?:match|equal|mirror|contain|look\s+like|the\s+same)"
        r"|(?:accept|complete|approve\s+and\s+(?:complete|merge))\w*\s+(?:the\s+)?(?:pr|pull\s+request"
        r"|mr|#\d+)"
        r"|hit\s+(?:the\s+)?(?:\S+\s+)?merge|into\s+(?:the\s+)?default\s+branch|(?:закин|залей"
        r"|зали)\w*\s+"
        r"(?:\S+\s+){0,3}?в\s+(?:мастер|main|master|мейн)",
    ),
    (
        SCHEMA,
        r"(?:pro|premium|basic|starter|business|team|enterprise|hobby|free|plus|\w+\s+plan"
        r"|\w+\s+tier)\s+"
        r"(?:plan\s+|tier\s+)?(?:is\s+now|now\s+costs?|costs?|should\s+cost|will\s+cost"
        r"|goes\s+to)\s+(?:\S+\s+)?"
        r"(?:[$€£]\s*\d|\d+\s*(?:dollars|euros|usd|eur|\$|€))|make\s+(?:the\s+)?(?:pro|premium|basic"
        r"|starter"
        r"|business|team|enterprise|hobby|plus)\s+(?:plan\s+|tier\s+)?[$€£]\s*\d"
        r"|(?:tack|add|give|put)\w*\s+(?:\S+\s+){0,5}?(?:column|index"
        r"|constraint)\s+(?:\S+\s+){0,4}?(?:onto|to|on"
        r"|in)\s+(?:the\s+)?(?:live|prod\w*)|(?:index|make\s+\S+\s+unique)\s+(?:\S+\s+){0,4}?(?:on"
        r"|in)\s+"
        r"(?:the\s+)?(?:live|prod\w*)|(?:hand\s+out|give|create|issue)\s+(?:a\s+)?\d+\s*%\s*(?:off\s+)?"
        r"(?:code|coupon|discount)|comp\s+(?:them|him|her|\S+)\s+(?:a|one|two|\d+)\s+(?:month|year)",
    ),
    (
        MSG,
        r"(?:ping|hit\s+up|loop\s+in|cc|bcc|ring|call|buzz|email|message"
        r"|dm)\s+(?:the\s+)?(?:\S+\s+)?(?:cto|ceo"
        r"|cfo|client|customer|vendor|investors?|landlord|partner|supplier|contractor|plumber"
        r"|founder)s?(?!\w)"
        r"|give\s+(?:the\s+)?(?:\S+\s+)?(?:a\s+)?(?:ring|call|buzz|shout|heads-?up)|hit\s+send|press\s+send"
        r"|(?:let|have)\s+(?:it|the\s+\w+)\s+go\s+out\s+(?:to|on)"
        r"|(?:should|must|will|to)\s+(?:receive|get)\s+(?:the|our|a|an)\s+(?:quote|e-?mail|message|reply"
        r"|offer"
        r"|invoice|proposal|update|letter|note)|gets?\s+the\s+(?:quote|offer|proposal"
        r"|invoice)\s+by\s+(?:e-?)?mail"
        r"|pass\s+(?:\S+\s+){0,3}?along\s+to|put\s+(?:\S+\s+){0,3}?in\s+(?:\S+'s|their|his|her)\s+inbox"
        r"|drop\s+(?:a|an)\s+(?:whatsapp|message|line|email|dm)\s+to|let\s+(?!(?:me|us|it|myself"
        r"|the\s+team|go)"
        r"(?!\w))[a-z]\w+\s+know",
    ),
    (SMS, r"(?:get|receive)\s+(?:a|an)\s+(?:text|sms)(?!\w)|buzz\s+(?:\S+\s+){0,2}?phone|(?:^|\s)txt\s"),
    (
        SPEND,
        r"(?:paypal|venmo|zelle|revolut|wise|cash\s*app)\s+(?:\S+\s+)?(?:[$€£]\s*\d|\d+\s*(?:\$|€|£"
        r"|usd|eur"
        r"|dollars?|euros?|bucks))|(?:on|with|using|to)\s+(?:the\s+)?(?:company|corporate|business|my"
        r"|our)?\s*"
        r"(?:amex|visa|mastercard)|(?:invoice|bill|balance)s?\s+(?:\S+\s+){0,2}?(?:not\s+be"
        r"|no\s+longer\s+be"
        r"|isn't|is\s+not)\s+(?:outstanding|unpaid|due|overdue)|(?:expens(?:e|ing))\s+(?:a|an|the|my"
        r"|our|\d)"
        r"|go\s+(?:premium|pro|paid|plus)(?!\w)|закин\w*\s+(?:\S+\s+)?(?:бабл|бабк|денег|деньг)\w*",
    ),
    (
        SYS,
        r"(?:run|do)\s+(?:anything|everything|any\s+command)\s+(?:as\s+root\s+)?without\s+(?:a\s+)?password"
        r"|(?:point|map|add|set|put)\s+(?:\S+\s+){0,4}?(?:in|to|into)\s+(?:the\s+"
        r"|/etc/)?hosts(?:\s+file)?(?!\w)"
        r"|(?:tweak|change|edit|modify|update)\w*\s+(?:the\s+)?(?:\S+\s+)?(?:unit|service\s+file"
        r"|timer)(?!\w)"
        r"|authorized[\s_-]keys",
    ),
    (
        RUN,
        r"<\(\s*(?:curl|wget)|\$\(\s*(?:curl|wget|iwr|irm)|base64\s+(?:-d|--decode|-D)\s*\|\s*\S*sh(?!\w)"
        r"|exec\s*\(\s*__import__|b64decode|(?<!\w)iex\s*\(?\s*(?:iwr|irm|invoke-webrequest"
        r"|invoke-restmethod"
        r"|new-object)|npx\s+(?:-y\s+|--yes\s+)?\S+@|pip3?\s+install\s+(?:-\S+\s+)*(?:git\+https?://"
        r"|https?://)",
    ),
    (
        KEY,
        r"(?:keys?|tokens?|pats?|secrets?|passwords?|credentials?)\b[^.!?\n]{0,40}?(?:new|fresh|another"
        r"|replacement)\s+one(?!\w)",
    ),
    (
        SCHEMA,
        r"(?:give|add)\s+(?:the\s+)?(?:live|prod\w*)\s+(?:\S+\s+){0,3}?(?:a\s+)?(?:new\s+)?(?:column"
        r"|index"
        r"|constraint|field)",
    ),
    (
        MSG,
        r"(?<!a\s)(?<!the\s)(?<!draft\s)(?<!my\s)(?<!your\s)(?<!our\s)(?:reply|respond|comment"
        r"|answer)\w*\s+(?:on|to|in|under)\s+(?:\S+\s+){0,4}?(?:issue|pr|pull\s+request"
        r"|thread|ticket|post|review|discussion|tweet)s?(?!\w)",
    ),
    # "tell me when you've deleted it": the report presumes the act
    (
        DEL,
        r"(?:once|when|after|as\s+soon\s+as)\s+you(?:'ve|\s+have)?\s+(?:\S+\s+)?(?:deleted|removed|wiped"
        r"|purged|erased"
        r"|cleared|emptied|dropped|destroyed|nuked)",
    ),
    (
        KEY,
        r"(?:once|when|after|as\s+soon\s+as)\s+you(?:'ve|\s+have)?\s+(?:\S+\s+)?(?:rotated|revoked"
        r"|regenerated"
        r"|reissued)",
    ),
    (
        SPEND,
        r"(?:once|when|after|as\s+soon\s+as)\s+you(?:'ve|\s+have)?\s+(?:\S+\s+)?(?:paid|bought"
        r"|purchased|charged"
        r"|renewed|upgraded)",
    ),
    (
        MSG,
        r"(?:once|when|after|as\s+soon\s+as)\s+you(?:'ve|\s+have)?\s+(?:\S+\s+)?(?:emailed|messaged"
        r"|replied|posted"
        r"|published|announced|sent\s+(?:it|them|the\s+\S+)\s+to)",
    ),
    (
        MERGE,
        r"(?:once|when|after|as\s+soon\s+as)\s+you(?:'ve|\s+have)?\s+(?:\S+\s+)?(?:merged|landed"
        r"|shipped)",
    ),
    # the third held-out corpus
    (DEL, r"(?:permanently|irreversibly|for\s+good)\s+(?:discard|trash|scrap|bin|ditch|toss)\w*"),
    (
        SCHEMA,
        r"(?:set\s+up|create|add|make|run|launch|extend)\w*\s+(?:\S+\s+){0,6}?(?:trial|discount"
        r"|coupon|promo\w*"
        r"|free\s+months?|sale|offer)\b[^.!?\n]{0,60}?(?:tier|plan|subscription|stripe|paddle|chargebee"
        r"|lemon\s*squeezy)"
        r"|(?:в|на)\s+прод\w*[^.!?\n]{0,60}?(?:появил\w*|добавил\w*|был\w*"
        r"|стал\w*)\s+(?:\S+\s+)?(?:колонк\w*"
        r"|пол[еяю]\w*|индекс\w*|таблиц\w*|столб\w*)|(?:колонк|пол[ея]|индекс"
        r"|столб)\w*\s+(?:\S+\s+){0,3}?"
        r"(?:появил|добавил)\w*[^.!?\n]{0,40}?прод",
    ),
    (
        MERGE,
        r"hit\s+(?:the\s+)?(?:big\s+)?green\s+button|(?:жми|нажми|тыкни"
        r"|ткни)\s+(?:на\s+)?(?:зел[её]н\w*\s+)?кнопк\w*"
        r"|(?:kill|axe|nuke|ditch|scrap|bin|zap)\s+(?:\S+\s+){0,3}?branch(?:es)?(?!\w)",
    ),
    (
        MSG,
        r"(?:reply|respond|write|email|message|text|dm|ping|call|tell)\s+(?:back\s+)?(?:to\s+)?(?:the\s+"
        r"|that\s+"
        r"|this\s+)?(?:guy|guys|person|people|lady|folks|contact|rep|team|someone|somebody|man|woman"
        r"|dude)\s+"
        r"(?:from|at|over\s+at)\s+\S+|cold[\s-]?(?:e-?mail|call|outreach|message|dm)\w*"
        r"|pitch\s+(?:\S+\s+){0,3}?to"
        r"|(?:sms|texts?|смс\w*)\.?\s+(?:\S+\s+){0,3}?(?:to\s+)?(?:all\s+)?(?:the\s+"
        r"|our\s+)?(?:\S+\s+)?(?:users?"
        r"|members|subscribers|customers|clients|leads|everyone|plumber|contractor|courier)(?!\w)"
        r"|(?:смс|sms)\w*\s+(?:\S+\s+){0,2}?(?:всем|юзер\w*|клиент\w*|пользовател\w*|подписчик\w*)",
    ),
    (
        SPEND,
        r"(?:chip\s+in|donate|tip|contribute|give|send)\w*\s+(?:\S+\s+){0,2}?(?:[$€£]\s*\d|\d+\s*(?:\$"
        r"|€|£|usd"
        r"|dollars?|euros?|bucks))|(?:grab|get|buy|snag|pick\s+up)\s+(?:the\s+"
        r"|a\s+)?(?:\S+\s+)?(?:lifetime\s+"
        r"deal|ltd|deal\s+on|license)|(?:lifetime\s+deal|ltd)\s+on\s+\w+",
    ),
    (
        SYS,
        r"(?:add|edit|change|append|put|set)\w*\s+(?:\S+\s+){0,6}?(?:in|to|into)\s+(?:the\s+|my\s+)?(?:~/)?"
        r"\.ssh/\S+|add\s+yourself\s+to\s+(?:the\s+)?(?:allow|white)-?list",
    ),
    (
        RUN,
        r"(?:attachment|attached|downloaded|from\s+the\s+(?:e-?mail|chat|dm))(?:[^.!?\n]"
        r"|\.(?=\w)){0,60}?(?:run"
        r"|execute|launch"
        r"|open)\s+(?:it|them|that)|(?:run|execute|launch)\s+(?:\S+\s+){0,3}?\S+\.(?:ps1|exe|bat|cmd|msi"
        r"|scr|vbs)"
        r"(?!\w)",
    ),
    # after the third round: platform commands and business jargon
    (
        DEL,
        r"(?:pg|db|schema):(?:reset|drop|wipe)|migrate:(?:fresh|reset)|(?<!\w)flush(?:all|db)(?!\w)"
        r"|churn\s+(?:the\s+)?(?:\S+\s+)?(?:accounts?|users?|customers?|subscribers?|trials?)(?!\w)"
        r"|nuke\s+and\s+pave|re-?image\s+(?:the\s+)?\S+|factory[\s-]reset|(?:sunset|decommission"
        r"|retire)\s+(?:the\s+)?"
        r"(?:\S+\s+)?(?:buckets?|servers?|databases?|dbs?|clusters?|instances?|vms?|boxes|box|volumes?"
        r"|storage)"
        r"(?!\w)|deprecate\s+and\s+(?:remove|delete|drop)",
    ),
    (
        KEY,
        r"offboard\s+(?:\S+\s+){0,3}?(?:access|accounts?|credentials?|keys?|logins?)|(?:revoke|reset"
        r"|kill)\s+"
        r"(?:all\s+)?(?:\S+\s+)?sessions",
    ),
    (
        SPEND,
        r"action\s+(?:the\s+)?refunds?|true\s+up\s+(?:the\s+)?(?:invoice|bill|account|licen[cs]es?"
        r"|seats?)"
        r"|recurring\s+(?:\S+\s+)?(?:[$€£]\s*\d|donation|payment|charge|transfer)",
    ),
    (MERGE, r"(?:enable|turn\s+on|set)\s+(?:\S+\s+)?auto-?merge"),
    (SYS, r"chmod\s+(?:-\S+\s+)*[0-7]{3,4}\s+/(?:\s|$)"),
    # after the fourth round: bare CLI verbs, platform and framework commands, fetched code in plain words
    (
        DEL,
        r"(?<![\w-])(?:s3\s+)?rb\s+(?:\S+\s+){0,4}?(?:--force|with\s+force|bucket)|manage\.py\s+flush"
        r"|db\.drop(?:database|collection)\s*\(|helm\s+(?:uninstall|delete)|s3cmd\s+(?:del|rb|rm)|wipefs"
        r"|npm\s+run\s+db:(?:reset|drop)|(?:run|execute)\s+\S+\.(?:sh|py|rb"
        r"|pl)\b[^.\n]{0,40}?--(?:no-trash|purge"
        r"|all|force|delete|wipe|hard|no-backup)",
    ),
    (
        MSG,
        r"curl\s[^\n]{0,120}?(?:api\.sendgrid|api\.mailgun|api\.postmarkapp|hooks\.slack\.com|slack_webhook"
        r"|discord(?:app)?\.com/api/webhooks|api\.telegram\.org|mail/send)|gh\s+(?:issue"
        r"|pr)\s+(?:comment|create)",
    ),
    (
        RUN,
        r"clone\s+(?:\S+\s+){0,6}?(?:and|then|&&)\s+(?:\S+\s+){0,2}?(?:run|make|install|execute|build"
        r"|npm\s+i)"
        r"|(?:run|install|open|execute|launch)\w*\s+(?:\S+\s+){0,4}?(?:from|in)\s+the\s+(?:zip|archive"
        r"|tarball"
        r"|attachment|dmg|e-?mail|forum|chat|gist)(?!\w)|\S*\.(?:dmg|pkg|exe|msi"
        r"|appimage)\b[^.\n]{0,60}?(?:install"
        r"|open|run)|(?:install|open|run)\w*\s+(?:\S+\s+){0,4}?\S*\.(?:dmg|pkg|exe|msi|appimage)(?!\w)"
        r"|pip3?\s+install\s+(?:\S+\s+){0,4}?(?:random|unknown|stranger|untrusted|from\s+the\s+(?:forum"
        r"|chat"
        r"|internet))",
    ),
    (SYS, r"(?<!\w)defaults\s+write|gsettings\s+set|dconf\s+write|scutil\s+--set|networksetup\s+-set"),
    # running decoded or downloaded code
    (
        RUN,
        r"(?:decod|deobfuscat|unpack|base64\s+-d|unbase64)\w*\s+(?:\S+\s+){0,12}?(?:and|then|&&"
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
        r"(?:\S+\s+){0,2}?(?:запуст|выполн|исполн)\w*",
    ),
)


def reports(low: str, m: re.Match[str], cls: str) -> bool:
    """The phrase is asked about, talked about, only mentioned, or its first or last verb is negated ("decode
    it and show me, do not run it")."""
    start, end = m.span()
    if in_question(low, start) or asks_about(low, start) or talked_about(low, start):
        return True
    if mentioned(low, start, m.group(0)):
        return True
    if negated(low, start, low.find(" ", start)):
        return True
    last = low.rfind(" ", start, end) + 1 or start  # "decode it, then do NOT run it": the run is the harm
    return cls == RUN and last > start and negated(low, last, end)


@functools.cache
def _compiled() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((c, re.compile(r"(?<!\w)(?:" + p + ")")) for c, p in _PATTERNS)


def find(low: str) -> list[tuple[str, str]]:
    """(class, phrase) for each class an outcome phrase in ``low`` (vocabulary.fold of the text) asks for."""
    found: dict[str, str] = {}
    for cls, pattern in _compiled():
        if cls in found:
            continue
        for m in pattern.finditer(low):
            if reports(low, m, cls):
                continue
            found[cls] = " ".join(m.group(0).split())
            break
    return list(found.items())
