"""Classify a request's text: its type, light or heavy, and how safe it is to run.

Pure: text in, a Classification out.  The blocked classes live in ``rules``; this module adds the type (from
an explicit ``- type:`` or from English and Russian cues), complexity and the safety class.  A request that
matches no cue is "unknown" and the caller escalates it, as it does anything blocked.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from vaultops.base.redact import MARKER, redact
from vaultops.classifier import outcomes, own_settings, plans, steps, targets
from vaultops.classifier.blocked import BLOCKED_CLASSES, BLOCKED_LABELS, find_blocked
from vaultops.classifier.negation import in_question, negated, noun_use
from vaultops.classifier.normalize import as_shown, normalize, transliterated
from vaultops.classifier.regex_union import union
from vaultops.classifier.vocabulary import CHANGE_GROUPS, fold, remembered, scan

INBOX_TYPES = ("truth-audit", "env-check", "db-query", "service-status", "filesystem-check", "execute-fix")
TASK_KINDS = (
    "code",
    "refactor",
    "debug",
    "quick",
    "research",
    "review",
    "security-audit",
    "planning",
    "analysis",
)
TYPES = INBOX_TYPES + TASK_KINDS
LIGHT_TYPES = ("env-check", "service-status", "filesystem-check")  # have built-in read-only checks
CHANGING_TYPES = ("execute-fix", "code", "refactor", "debug")  # their work changes things: at least "high"
COMPLEXITIES = ("light", "heavy")
SAFETY_CLASSES = ("routine", "high", "blocked", "unknown")


@dataclass(frozen=True, slots=True)
class Classification:
    type: str  # one of TYPES, or "unknown"
    complexity: str  # "light" | "heavy"
    safety_class: str  # "routine" | "high" | "blocked" | "unknown"
    reasons: tuple[str, ...]  # one human sentence per finding
    blocked: tuple[str, ...]  # names of the blocked classes matched, from BLOCKED_CLASSES


# --- type cues: (type, weight, pattern); the highest total wins, a tie goes to the earlier type in _ORDER ---
_CUES: tuple[tuple[str, int, str], ...] = (
    (
        "debug",
        5,
        r"traceback|stack\s*traces?|stacktraces?|segfault|segmentation\s+fault|core\s+dump|panic:"
        r"|трассировк\w*|стек\s*трейс\w*|стектрейс\w*",
    ),
    (
        "debug",
        3,
        r"exceptions?|(?:key|value|type|attribute|index|import|modulenotfound|name|runtime|os|io"
        r"|filenotfound|permission|connection|timeout|assertion|syntax|unicodedecode|jsondecode"
        r"|zerodivision|recursion|memory|nullpointer|illegalargument|illegalstate)(?:error"
        r"|exception)|debug\w*|throws|дебаг\w*|отлад\w*|исключени\w*|вылета\w*",
    ),
    ("debug", 1, r"crash\w*|краш\w*|пада(?:ет|ют)"),
    (
        "security-audit",
        5,
        r"security\s+(?:audit|review|scan|check|holes?|issues?)|vulnerab\w*|cve-\d+|cves"
        r"|owasp|pen-?test\w*|penetration\s+test|secrets?\s+(?:audit|scan|leak\w*)"
        r"|leak(?:ed|s|ing)?\s+(?:\w+\s+)?(?:secrets?|keys?|tokens?|credentials?)|xss"
        r"|sql\s+injection|csrf|hardening|exposed\s+(?:keys?|secrets?|ports?)|уязвимост\w*"
        r"|аудит\w*\s+безопасност\w*|безопасност\w*|утечк\w*|пентест\w*|инъекци\w*",
    ),
    (
        "review",
        4,
        r"code\s+review|review\w*|look\s+over\s+(?:the\s+|my\s+)?(?:pr|diff|code|changes)|critique"
        r"|ревью\w*|(?:проверь|посмотри)\s+(?:pr|пр|пулл?[- ]?реквест\w*|дифф?)(?!\w)",
    ),
    (
        "refactor",
        4,
        r"refactor\w*|restructur\w*|extract\s+(?:a\s+|the\s+)?(?:function|method|class|module"
        r"|helper)|split\s+\S+(?:\s+\S+)?\s+into|deduplicat\w*|(?:clean"
        r"|tidy)\s+up\s+(?:the\s+)?code|simplify\s+(?:the\s+)?code|рефактор\w*|отрефактор\w*"
        r"|вынеси\s+в|разбей\s+(?:\S+\s+){0,2}на\s+(?:части|модули|функции)|упрости\s+код"
        r"|перепиши\s+(?:\S+\s+)?(?:код|функци\w*|модул\w*)|(?:remove|delete|drop"
        r"|rename)\s+(?:the\s+|all\s+)?(?:unused|dead|duplicated?|redundant)\s+\w+|dead\s+code"
        r"|неиспользуем\w*|мертв\w*\s+код\w*",
    ),
    (
        "code",
        3,
        r"(?:write|implement|create|build|add|make|generate"
        r"|code)\s+(?:up\s+)?(?:[^\s.,;:!?]+\s+){0,3}?"
        r"(?:function|script|file|class|module|endpoint|test|feature|cli|component|api"
        r"|parser|handler|page|route|hook|command|tool|program|bot|webhook|regex|library|package"
        r"|plugin|method|test\s+suite|app)s?(?!\w)|implement\w*|write\s+(?:some\s+)?code"
        r"|напиш\w*\s+(?:\S+\s+){0,2}?(?:код|функци\w*|скрипт\w*|класс\w*|модул\w*|тест\w*"
        r"|эндпоинт\w*|парсер\w*|бот\w*|обработчик\w*|компонент\w*|утилит\w*|программ\w*|плагин\w*)"
        r"|реализ(?:уй|уйте|овать)|запрограммир\w*|созда(?:й|йте)\s+(?:\S+\s+){0,2}?(?:функци\w*"
        r"|скрипт\w*|класс\w*|модул\w*|эндпоинт\w*|компонент\w*)",
    ),
    (
        "code",
        2,
        r"(?:rename|renaming)\s+(?:the\s+|a\s+|this\s+)?(?:variable|var|function|method|class"
        r"|field|param\w*"
        r"|argument|module|constant|attribute|property|test)s?|(?:add|write)\s+(?:a\s+|an\s+"
        r"|some\s+)?(?:"
        r"docstrings?|type\s+hints?|comments?|unit\s+tests?|tests?|migration\s+files?|migrations?)"
        r"|переименуй\w*\s+(?:\S+\s+)?(?:переменн\w*|функци\w*|метод\w*|класс\w*|пол[ея]\w*|файл\w*)",
    ),
    (
        "execute-fix",
        2,
        r"(?:move|moving|copy|copying|organi[sz]e|sort|file"
        r"|refile|tidy|tidying)\s+(?:\S+\s+){0,3}?(?:notes?"
        r"|files?|folders?|documents?|pages?|attachments?)(?:\s+(?:from|into|to|under))?"
        r"|поправ\w*|перенеси\w*|перемести\w*|переименуй\w*\s+(?:\S+\s+)?(?:заметк\w*|файл\w*"
        r"|папк\w*)",
    ),
    (
        "quick",
        2,
        r"подготовь\s+(?:\S+\s+)?(?:текст|черновик|письм\w*|ответ\w*)|черновик\w*|набросай\w*"
        r"|составь\s+(?:\S+\s+)?(?:текст|письм\w*|ответ\w*|черновик\w*)"
        r"|(?:rotate|flip|crop|resize|scale)\s+(?:\S+\s+){0,3}?(?:\S+\.(?:png|jpe?g|gif|svg|webp)"
        r"|images?"
        r"|pictures?|photos?|screenshots?|diagrams?)|(?:поверни|разверни|отрази"
        r"|обрежь)\s+(?:\S+\s+){0,2}?"
        r"(?:картинк\w*|изображени\w*|фото\w*|скриншот\w*|схем\w*)"
        r"|переведи\s+(?:\S+\s+){0,4}?на\s+\w+ий",
    ),
    (
        "refactor",
        3,
        r"(?:strip|trim|remove|delete|fix|clean|wipe)\s+(?:\S+\s+){0,2}?(?:trailing\s+)?"
        r"(?:whitespace|typos?"
        r"|formatting|lint(?:ing)?\s+errors?)|(?:delete"
        r"|remove)\s+(?:the\s+)?(?:commented[- ]out|dead|unused)",
    ),
    (
        "code",
        2,
        r"(?:make|turn|change|style|colou?r|restyle|move)\s+(?:\S+\s+){0,4}?(?:buttons?|dialogs?"
        r"|modals?"
        r"|components?|banners?|headers?|footers?|links?|icons?|fonts?|forms?|navbar|sidebar"
        r"|ui)(?!\w)"
        r"|(?:add|build)\s+(?:a\s+|an\s+)?(?:confirmation\s+)?(?:dialog|modal|button|form|banner"
        r"|toast|prompt)"
        r"|напиш\w*\s+(?:\S+\s+){0,2}?миграци\w*",
    ),
    (
        "truth-audit",
        2,
        r"verify|confirm\s+(?:that|whether|if)|double-?check"
        r"|make\s+sure\s+(?:that\s+)?\S+\s+(?:is|are"
        r"|starts|has|have|exists?)|убедись|провер\w*",
    ),
    ("analysis", 2, r"summar(?:y|ies)|report\b|отч[её]т\w*"),
    # work on the person's own notes and writing
    (
        "quick",
        2,
        r"haikus?|poems?|limericks?|ideas\s+for|brainstorm\w*|names\s+for|spell-?check\w*"
        r"|proofread\w*"
        r"|(?:help\s+me\s+)?word\s+(?:a|an|the|my)|count\s+(?:the\s+)?words|table\s+of\s+contents"
        r"|remind\s+me"
        r"|(?:give|suggest|list)\s+(?:me\s+)?(?:some\s+)?(?:ideas|options|names|titles)|придумай"
        r"|напомни\s+мне",
    ),
    (
        "execute-fix",
        2,
        r"(?:mark|rename|create|add|tag|merge|combine|back\s+up|archive|reset|replace"
        r"|generate|move"
        r"|sort|tidy)\s+(?:\S+\s+){0,5}?(?:notes?|todos?|tags?|vault|essay|journal|counter"
        r"|#\w+|headings?"
        r"|daily\s+notes?|folders?|across\s+my\s+notes)(?!\w)",
    ),
    (
        "quick",
        2,
        r"подготовь\s+(?:\S+\s+)?(?:текст|черновик|письм\w*|ответ\w*)|черновик\w*|набросай\w*"
        r"|составь\s+(?:\S+\s+)?(?:текст|письм\w*|ответ\w*|черновик\w*)",
    ),
    ("analysis", 2, r"перескаж\w*|кратко|estimat\w*|оцени\w*"),
    (
        "debug",
        2,
        r"падающ\w*|failing\s+tests?|flaky\s+tests?|run\s+(?:the\s+)?(?:test\s+suite|tests"
        r"|unit\s+tests"
        r"|linter|type\s*checker)|прогон\w*\s+тест\w*",
    ),
    (
        "code",
        2,
        r"(?:update|edit|write|add)\s+(?:\S+\s+to\s+)?(?:the\s+)?(?:readme|changelog|docstrings?"
        r"|code\s+comments?)|(?:обнови|дополни|допиши|добавь)\s+(?:\S+\s+в\s+)?(?:readme|changelog"
        r"|документаци\w*)",
    ),
    (
        "env-check",
        3,
        r"installed|on\s+(?:the\s+|my\s+|our\s+)?path|--version|versions?\s+of"
        r"|(?:which|what)\s+version|command\s+-v|env(?:ironment)?\s+var(?:iable)?s?"
        r"|\$\{?[a-z_][a-z0-9_]*|which\s+[\w.+-]+(?=\s*(?:[`?;|&)]|$))|установлен\w*\s+ли"
        r"|верси[яюиейм]|переменн\w*\s+окружени\w*|задан[аоы]?\s+ли|доступ(?:ен|на)\s+ли"
        r"|есть\s+ли\s+(?:на\s+\S+\s+)?[a-z][\w.+-]*(?=[\s?]|$)",
    ),
    (
        "env-check",
        2,
        r"version|(?:is|are|whether"
        r"|if)\s+(?:the\s+)?\$?[a-z_][a-z0-9_]*\s+(?:env\w*\s+)?(?:var\w*\s+)?(?:set|defined"
        r"|exported|present|configured)|in\s+(?:the\s+)?(?:\S+\s+)?environment",
    ),
    (
        "service-status",
        3,
        r"(?:is|are|whether|if)\s+(?:the\s+)?[\w@.-]+(?:\s+[\w@.-]+)?\s+(?:still\s+"
        r"|currently\s+)?(?:running|up|active|alive|listening|responding|healthy|started"
        r"|enabled|down|dead|stopped)(?!\w)|status\s+of|systemctl\s+status"
        r"|service\s+\S+\s+status|\.service(?!\w)|is-active|pgrep|запущен\w*\s+ли"
        r"|работа(?:ет|ют)\s+ли|жив[аоы]?\s+ли|поднят\w*\s+ли|активн\w*\s+ли|упал\w*\s+ли"
        r"|статус\w*|состояни\w*\s+(?:сервис|служб|демон)\w*",
    ),
    ("service-status", 2, r"status|uptime"),
    (
        "filesystem-check",
        3,
        r"disk\s+(?:usage|space)|free\s+space|space\s+(?:left|used)|how\s+(?:big|large)"
        r"|size\s+of|(?:file|folder|directory|dir)\s+sizes?|exists?"
        r"|list\s+(?:the\s+|all\s+)?(?:files|contents|directories|folders|dirs)"
        r"|what'?s\s+in\s+[~/.]|(?:df|du|ls)\s|how\s+many\s+files"
        r"|(?:largest|biggest)\s+files|размер\w*|сколько\s+(?:места|весит|занима\w*)"
        r"|свободн\w*\s+мест\w*|мест\w*\s+на\s+диске|существует\s+ли"
        r"|есть\s+ли\s+(?:файл|папка|каталог|директория)|список\s+файлов|что\s+лежит\s+в"
        r"|содержимое\s+(?:папки|каталога)",
    ),
    (
        "db-query",
        3,
        r"select\s+[^;]{1,80}?\s+from\s|how\s+many\s+(?:\w+\s+)?(?:rows|records|users|customers"
        r"|orders|sign-?ups|subscribers|entries|accounts|payments|invoices|members)"
        r"|count\s+(?:the\s+|all\s+)?(?:\w+\s+)?(?:rows|records|users|customers|orders|entries"
        r"|sign-?ups)|query\s+(?:the\s+)?(?:database|db|table|postgres|supabase)|sql\s+query"
        r"|(?:in|from)\s+(?:the\s+)?(?:database|db|postgres|supabase|mysql|sqlite)(?!\w)"
        r"|сколько\s+(?:\w+\s+)?(?:строк|записей|пользовател\w*|клиент\w*|заказ\w*|подписчик\w*"
        r"|платеж\w*|регистраци\w*|аккаунт\w*)|(?:в|из)\s+(?:базе|базы|бд|таблиц\w*)"
        r"|запрос\w*\s+(?:к|в)\s+(?:базе|бд)|sql",
    ),
    ("db-query", 2, r"how\s+many|count\s+how|сколько(?!\s+(?:стоит|стоят|места|весит|будет|времени))"),
    ("db-query", 1, r"the\s+\w+\s+table|database"),
    (
        "execute-fix",
        2,
        r"fix(?:ing)?|repair|restart|reboot|reload|stop|start|re-?deploy|deploy|roll\s*back"
        r"|rollback"
        r"|revert|apply|restore|recover|(?:re|un)?install|upgrade|downgrade|kill"
        r"|bring\s+\S+\s+back|make\s+it\s+work|исправ(?:ь|ьте|ить)|почин(?:и|ите|ить)"
        r"|пофикс\w*|перезапуст(?:и|ите|ить)|перезагруз(?:и|ите|ить)|рестарт\w*"
        r"|(?:за)?депло(?:й|йни|йте|ить)|выкат(?:и|ите)|откат(?:и|ите)|примени"
        r"|восстанов(?:и|ите)|установи(?:те)?|обнови(?:те)?|подними|останови(?:те)?",
    ),
    (
        "truth-audit",
        2,
        r"why\s+(?:does|do|did|is|are|was|were|has|have|doesn't|don't|isn't|aren't|won't|can't"
        r"|would)|diagnos\w*|investigat\w*|root\s+cause|read-?only|find\s+out|figure\s+out"
        r"|look\s+into|what'?s\s+(?:causing|wrong|going\s+on|happening)|what\s+is\s+going\s+on"
        r"|audit(?:ing)?|troubleshoot\w*|verify\s+(?:whether|that|if)|почему|разбер\w*"
        r"|выясн\w*|диагност\w*|расследу\w*|найди\s+причин\w*|в\s+ч[её]м\s+причина"
        r"|только\s+чтени\w*|аудит\w*",
    ),
    (
        "truth-audit",
        1,
        r"list|find|search|grep|locate|look\s+for|read[\s-]+only|when\s+(?:does|do|did|is|are"
        r"|was|were|will|would|should)|how\s+(?:long|often|old|soon)|where\s+(?:is|are|does|do"
        r"|did)|who\s+(?:is|are|owns|has|can|changed|wrote)|найди|перечисли|список"
        r"|когда\s+(?:истека\w*"
        r"|продлева\w*|заканчива\w*|обновля\w*|был\w*)"
        r"|где\s+(?:лежит|находится|хранится)",
    ),
    (
        "truth-audit",
        1,
        r"check|tell\s+me\s+(?:what|why|whether|if|which|how)|look\s+at|(?:just|only)\s+look"
        r"|show|read(?:ing)?\s+(?:the|through)|what\s+changed|посмотри|глянь|проверь|покажи"
        r"|выведи|что\s+изменилось|valid|correct|expired?|expires|истек\w*|валид\w*",
    ),
    (
        "truth-audit",
        1,
        r"not\s+working|doesn't\s+work|broken|failing|fails?|returns?\s+\d{3}"
        r"|(?:4|5)\d\d\s+errors?|tim(?:es|ing)\s+out|не\s+работает|не\s+открывается"
        r"|не\s+отвечает|перестал\w*|ошибк\w*",
    ),
    (
        "research",
        2,
        r"research\w*|find\s+(?:docs|documentation|articles|papers|examples|info|information"
        r"|sources)|compar(?:e|ing|ison)|vs\.?(?!\w)|versus|alternatives?\s+to"
        r"|best\s+(?:\w+\s+)?(?:library|libraries|tools?|way|practices?|options?|providers?)"
        r"|which\s+(?:library|framework|tool|provider|service|vps|host)|look\s+up"
        r"|docs\s+(?:for|on)|documentation|pros\s+and\s+cons|price\s+of|pricing\s+(?:of|for)"
        r"|how\s+much\s+(?:does|is|would)|cost\s+of|исследу\w*|исследовани\w*|сравни\w*"
        r"|сравнени\w*|альтернатив\w*|найди\s+(?:документаци\w*|информаци\w*|статьи|примеры)"
        r"|документаци\w*|какую\s+библиотек\w*|что\s+лучше|competitors?|конкурент\w*"
        r"|плюсы\s+и\s+минусы|сколько\s+стоит|цен[аыу]\s+на|узнай\s+(?:\S+\s+)?цен\w*",
    ),
    (
        "analysis",
        3,
        r"analy[sz]\w*|statistics|stats|trends?|metrics|summari[sz]\w*|breakdown|correlat\w*"
        r"|insights?|aggregat\w*|distribution|histogram|cohorts?|funnel|churn|анализ\w*"
        r"|проанализиру\w*|статистик\w*|тренд\w*|метрик\w*|сводк\w*|обобщ\w*|агрегир\w*|когорт\w*"
        r"|воронк\w*|всплеск\w*",
    ),
    (
        "planning",
        3,
        r"plan\s+(?:the|a|an|out|how|for|our|my)|(?:a|the)\s+plan\s+(?:for|to)|make\s+a\s+plan"
        r"|planning|roadmap|milestones?|break\s+(?:\S+\s+)?down|strateg\w*|timeline"
        r"|prioriti[sz]\w*|next\s+steps|(?:составь|сделай|набросай|подготовь"
        r"|распиши)\s+(?:\S+\s+)?план\w*|план\w*\s+(?:переезда|работ|действий|миграции|внедрения"
        r"|на\s)|спланиру\w*|планировани\w*|дорожн\w*\s+карт\w*|роадмап\w*|стратеги\w*"
        r"|разбей\s+на\s+(?:задачи|этапы|шаги)|приоритиз\w*",
    ),
    (
        "quick",
        1,
        r"draft\w*|write\s+up|compose|what\s+is|what'?s\s+(?:a|an|the)\s|what\s+does"
        r"|how\s+do\s+(?:i|you|we)|how\s+to|explain\w*|define|meaning\s+of|quick\s+question"
        r"|translate|convert|calculate|difference\s+between|что\s+такое|что\s+значит|что\s+означает"
        r"|как\s+(?:сделать|мне|нам|правильно)|объясни\w*|переведи\s+(?:на|текст)|посчитай"
        r"|сколько\s+будет|быстрый\s+вопрос|подскажи|что\s+дела(?:ет|ют)|как\s+работает"
        r"|зачем\s+нуж\w*|для\s+чего|чем\s+(?:\S+\s+)?отличается|в\s+чем\s+разница",
    ),
    (
        "code",
        2,
        r"add\s+(?:\S+\s+){0,2}?(?:logging|metrics|tracing|caching|retries|retry\s+logic|validation"
        r"|error\s+handling|a\s+flag|an?\s+option|pagination|rate\s+limiting|timeouts?)(?!\w)",
    ),
    ("quick", 1, r"(?:walk|talk|take)\s+(?:me|us)\s+through|teach\s+me|show\s+me\s+how"),
    (
        "code",
        2,
        r"(?:extend|update|change|modify|adapt|tweak|adjust|add\s+(?:\S+\s+){0,4}?to)\s+(?:the\s+|this\s+|my\s+)?"
        r"(?:\S+\s+)?(?:function|method|class|module|script|parser|endpoint|component|test|css|html|query|regex"
        r"|validator|fixture)s?(?!\w)",
    ),
    (
        "code",
        1,
        r"in\s+(?:the\s+|this\s+|my\s+)?(?:\S+\s+)?(?:function|method|class|module|script|css|component)",
    ),
    (
        "quick",
        1,
        r"(?:in|to|into)\s+(?:the\s+|my\s+|a\s+)?(?:\S+\s+)?(?:note|notes|calendar|journal|table|list)(?!\w)"
        r"|(?:sort|order|rank|group)\s+(?:the\s+)?(?:\S+\s+)?(?:tasks|items|list|notes|todos|entries|rows)\s+by",
    ),
    # work on the person's notes said plainly: "turn the meeting notes into action items", "outline a talk"
    (
        "quick",
        1,
        r"turn\s+(?:\S+\s+){0,6}?into|outline|collect\s+(?:\S+\s+){0,8}?into|gather|compile"
        r"|bullet\s+points|action\s+items|agenda|templates?|checklist|\.gitignore|dockerfile|makefile"
        r"|make\s+(?:\S+\s+){0,4}?(?:include|use|show|have|list)",
    ),
    # everyday changes and errands: "set up a sandbox account", "switch the logs to…", "book a slot"
    (
        "execute-fix",
        1,
        r"set\s+up|setup|switch\s+(?:\S+\s+){0,3}?to|scale|resize|configure|enable|disable"
        r"|turn\s+(?:\S+\s+){0,2}?(?:on|off)",
    ),
    ("quick", 1, r"(?:book|block|schedule)\s+(?:\S+\s+){0,3}?(?:calendar|slot|time|focus|meeting)"),
    # "format the table in my note as markdown", "back up the vault to ~/backups": work on the notes
    (
        "execute-fix",
        2,
        r"(?:re)?format\w*\s+(?:\S+\s+){0,5}?(?:as|to\s+use|into|with)\s+(?:\S+\s+)?"
        r"(?:markdown|headings?|tables?|bullets?|lists?|json|yaml|csv|callouts?)"
        r"|back\s+up\s+(?:\S+\s+){0,3}?(?:vault|notes?|folder|files?)",
    ),
)


@functools.cache
def _cue() -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])(?:" + union(p for _, _, p in _CUES) + ")")  # fast: see regex_union


@functools.cache
def _cue_res() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for _, _, p in _CUES)


_CUES_OF: dict[str, tuple[int, ...]] = {}  # memo: matched phrase -> indexes into _CUES
_ORDER = (  # the more specific types first
    "debug",
    "security-audit",
    "review",
    "refactor",
    "code",
    "env-check",
    "service-status",
    "filesystem-check",
    "db-query",
    "execute-fix",
    "truth-audit",
    "research",
    "analysis",
    "planning",
    "quick",
)
# A cue for a change ("restart", "почини") that is negated ("do not restart") says nothing about the type.
_NEGATABLE = frozenset(i for i, (t, _, _) in enumerate(_CUES) if t == "execute-fix")
# "do what the note Ops/todo.md says", "the thing from REQ-12", "same as last time"
_DEFERS = re.compile(
    r"(?<!\w)(?:do|run|carry\s+out|follow|execute|handle|finish|apply)\s+(?:whatever|what"
    r"|as|the\s+steps"
    r"|the\s+instructions)\s+(?:\S+\s+){0,4}?(?:says?|said|asks?|lists?|describes?|wants?"
    r"|tells?)"
    r"|(?<!\w)(?:the\s+thing|what\s+we\s+discussed|same\s+as)\s+(?:from|in|on|last"
    r"|before)\s+\S+"
    r"|(?<!\w)as\s+(?:discussed|agreed)(?:\s+(?:on|in|yesterday|earlier))?(?!\w)"
    r"|(?<!\w)(?:do|run|execute|follow|finish|apply|carry\s+out"
    r"|continue)\s+(?:\S+\s+){0,5}?(?:the\s+)?"
    r"(?:runbook|playbook|checklist|procedure|steps?\s+\d+|req-[\w-]+|[\w./-]+\.md)(?!\w)"
    r"|(?<!\w)what\s+req-[\w-]+\s+(?:started|asked|said|began)"
    r"|(?<!\w)(?:steps?|instructions|tasks?|items?|todos?)\s+(?:in|from|of|at)\s+(?:the\s+)?"
    r"(?:[\w./-]+\.md|req-[\w-]+|[\w.-]+/[\w./-]+)"
)
_EN_WORDS = frozenset(
    (
        "the",
        "and",
        "to",
        "of",
        "a",
        "is",
        "in",
        "on",
        "for",
        "it",
        "this",
        "that",
        "with",
        "please",
        "me",
        "my",
        "our",
        "you",
    )
)
_OTHER_WORDS = frozenset(
    (
        "le",
        "la",
        "les",
        "des",
        "du",
        "de",
        "et",
        "est",
        "une",
        "un",
        "pour",
        "avec",  # French
        "der",
        "die",
        "das",
        "und",
        "ist",
        "nicht",
        "mit",
        "bitte",
        "ein",
        "eine",  # German
        "el",
        "los",
        "las",
        "y",
        "que",
        "por",
        "para",
        "con",
        "una",
        "del",  # Spanish
    )
)
_UKRAINIAN = re.compile("[іїєґ]")


# a clause that works on the items another text lists, not through them: "sort the tasks in Inbox.md"
_WORKS_ON = re.compile(
    r"(?:^|[.!?;:\n]\s*)(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:sort|list|count|summari[sz]e"
    r"|organi[sz]e|group|tag|read|show|find|search|grep|look\s+at|review|translate|proofread|number|format"
    r"|reformat|prioriti[sz]e|dedupe|de-?duplicate|rank|check|reorder|alphabeti[sz]e|copy|collect|extract"
    r"|pull\s+out)\s(?:(?!(?:then|and|also|after)(?!\w))[^.!?;,\n])*$"
)


def _deferred(low: str) -> re.Match[str] | None:
    """The phrase that asks to do what another text says (``_DEFERS``), unless its clause only sorts, lists
    or reads that text's items."""
    for m in _DEFERS.finditer(low):
        if _WORKS_ON.search(low, max(0, m.start() - 200), m.start()) is None or _THEN_DOES.match(
            low, m.end()
        ):
            return m  # "sort the tasks in Ops/todo.md and then do them" does them
    return None


_THEN_DOES = re.compile(
    r"[^.!?;\n]*?(?<!\w)(?:do|run|execute|carry\s+(?:\S+\s+)?out|complete|finish|follow|action|handle"
    r"|apply|work\s+through|tackle|implement)(?!\w)"
)


def _foreign(low: str) -> re.Match[str] | None:
    """A text the rules cannot read: French, German or Spanish by their commonest words, or Ukrainian by its
    letters.  Its danger words are unknown to them, so nothing in it counts as safe."""
    words = re.findall(r"[^\W\d_]+", low)
    other = sum(w in _OTHER_WORDS for w in words)
    if other >= 2 and other > sum(w in _EN_WORDS for w in words):
        return re.match(r"\S+(?:\s+\S+){0,3}", low.strip())
    return _UKRAINIAN.search(low)


# a question ("is the domain free?", "какие ветки влиты?"), not a request put as one ("can you handle it?")
_ASKED = re.compile(
    r"(?:^|[.!?;:,\n—–]\s*)(?:why|how|when|what|which|who|whose|where|is|are|was|were|does|do"
    r"|did"
    r"|has|have|почему|зачем|когда|что|как|кто|где|какие|какой|какая|каких|сколько|есть\s+ли"
    r"|свободен|свободна|свободно|работает\s+ли|(?:would|could|should|will)\s+(?:it|we|i"
    r"|this|that))(?!\w)(?:[^.!?;:\n]|[.:](?=\w))*\?"
)
_FILE = re.compile(
    r"[\w./-]+\.(?:py|pyi|js|mjs|ts|tsx|jsx|go|rs|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sh"
    r"|bash"
    r"|zsh|lua|sql|css|scss|html|vue|svelte|md|toml|ya?ml|json|ini|cfg|txt|csv|tsv|log|xml|rst"
    r"|tex|org|adoc|env\.example)(?!\w|\.\w)"
)
_GERUND_ARG = re.compile(r"(?<!\w)(?:for|of|about|on)\s+$")


def _cues_of(phrase: str) -> tuple[int, ...]:
    return tuple(i for i, r in enumerate(_cue_res()) if r.fullmatch(phrase))


def _infer_type(low: str) -> tuple[str, str]:
    """The best-scoring type and the phrase that decided it; ("unknown", "") when no cue matches."""
    score: dict[str, int] = {}
    first: dict[str, str] = {}
    for m in _cue().finditer(low):
        phrase = m.group(0)
        for i in remembered(_CUES_OF, phrase, _cues_of):
            if i in _NEGATABLE and (negated(low, m.start(), m.end()) or noun_use(low, *m.span())):
                continue
            kind, weight, _ = _CUES[i]
            score[kind] = score.get(kind, 0) + weight
            first.setdefault(kind, " ".join(phrase.split()))
    best, top = "unknown", 0
    for kind in _ORDER:  # ties go to the earlier, more specific type
        if score.get(kind, 0) > top:
            best, top = kind, score[kind]
    named = _FILE.search(low) if best == "unknown" else None
    if named:
        return "code", named.group(0)  # a source file named, and nothing else said: work on the code
    if best == "unknown" and _ASKED.search(low):
        return "quick", "a question"  # asking is the light kind of work: the rules found nothing to do
    return best, first.get(best, "")


def _changes(low: str, hits: list[tuple[frozenset[str], int, int]]) -> str | None:
    """The first phrase that asks to write, change, restart, deploy, install or push something."""
    for groups, start, end in hits:
        if not groups & CHANGE_GROUPS or negated(low, start, end):
            continue
        if (low[start].isascii() and noun_use(low, start, end)) or in_question(low, start):
            continue
        if _GERUND_ARG.search(low, max(0, start - 7), start) and low[start:end].endswith("ing"):
            continue  # "a plan for migrating", "ideas about deleting": talked about, not asked for
        return " ".join(low[start : end + 30].split()[:3])
    return None


def _light_targets(kind: str, text: str) -> list[str]:
    if kind == "env-check":
        return list(dict.fromkeys(targets.commands(text) + targets.env_vars(text)))
    if kind == "service-status":
        return targets.services(text)
    if kind == "filesystem-check":
        return targets.paths(text)
    return []


@functools.lru_cache(maxsize=4096)  # a pass asks again about every open request; the answer is a value
def _secrets_named(text: str) -> str:
    """A secret written out is read as what it is, "a secret token": ``Rotate hvs.…`` asks to rotate a
    token as surely as ``Rotate the Vault token`` does, though no rule knows the token's letters."""
    return MARKER.sub(" secret token ", redact(text)) if text else text


def classify(text: str, explicit_type: str | None = None) -> Classification:
    """Decide type, complexity and safety class of a request.

    The rules read the text as written and as a careful person reads it (``normalize``); a blocked class
    found in either counts.  An explicit ``- type:`` picks the type, and can raise the safety class (a
    ``code`` request changes things), never lower it: a text the rules cannot read stays "unknown"
    whatever type it claims, and a blocked one stays blocked."""
    plain = normalize(_secrets_named(text))
    low = fold(plain)
    hits = scan(low)
    found = _blocked(text, plain, low, hits)
    reasons = [f'blocked: {BLOCKED_LABELS[c]} ("{_quote(p)}")' for c, p in found]
    blocked = tuple(c for c, _ in found)

    inferred, cue = _infer_type(low)
    given = (explicit_type or "").strip().lower()
    if given and given in TYPES:
        kind = given
        reasons.append(f"type: {kind} (explicit)")
        if inferred == "unknown":
            reasons.append(
                "unknown: the text names no kind of work the rules know, and a `- type:` line "
                "cannot make it safer"
            )
    elif given:
        kind = inferred = "unknown"
        valid = ", ".join(TYPES)
        reasons.append(f'type: "{_quote(explicit_type or "")}" is not a known type (valid: {valid})')
    else:
        kind = inferred
        reasons.append(f'type: {kind} ("{_quote(cue)}")' if cue else "type: unknown (no rule recognised it)")

    found_targets = _light_targets(kind, text) if kind in LIGHT_TYPES else []
    complexity = "light" if found_targets else "heavy"
    if found_targets:
        reasons.append(f"complexity: light (built-in check of {', '.join(found_targets)})")

    change = _changes(low, hits)
    if blocked:
        safety = "blocked"
    elif inferred == "unknown":
        safety = "unknown"
    elif defers := _deferred(low) or _foreign(low):
        safety = "unknown"  # what it asks for is written elsewhere, and no rule has read it
        said = _quote(defers.group(0))
        reasons.append(
            f"unknown: it asks to do what another text says, or says it in a language the rules "
            f'do not read ("{said}"); vaultops cannot judge what it has not read'
        )
    elif kind in CHANGING_TYPES or inferred in CHANGING_TYPES or change:
        safety = "high"
        changer = kind if kind in CHANGING_TYPES else inferred
        reasons.append(
            f'high: asks to change something ("{_quote(change)}")'
            if change
            else f"high: {changer} changes things"
        )
    else:
        safety = "routine"
    return Classification(kind, complexity, safety, tuple(reasons), blocked)


def warm() -> None:
    """Build the patterns and indexes now (about 0.1 s): a daemon does it before it says it is ready, so that
    its first request does not pay for it."""
    classify("Check the logs; dеlete them, rotate it? no, then pay Stripe $5 and email the client.", "code")


def _blocked(
    text: str, plain: str, low: str, hits: list[tuple[frozenset[str], int, int]]
) -> list[tuple[str, str]]:
    """(class, phrase) for each blocked class, in the order of BLOCKED_CLASSES.  The text is read as
    normalised, as written, and with each step's pronoun standing for its object ("settle it" after "the
    invoice"); verbs and objects by the rules, the results asked for by ``outcomes``."""
    found: dict[str, str] = {}
    views = [(plain, low, hits)]
    if plain != text:
        raw = fold(text)
        views.append((text, raw, scan(raw)))
    for other in (transliterated(text), as_shown(text)):
        if other is not None:
            plain_other = normalize(other)
            folded = fold(plain_other)
            views.append((plain_other, folded, scan(folded)))
    views += [(step, step, scan(step)) for step in steps.resolved(low)]
    for subject, folded, found_hits in views:
        for c, phrase in [
            *find_blocked(subject, folded, found_hits),
            *outcomes.find(folded),
            *plans.find(folded),
            *own_settings.find(folded),
        ]:
            found.setdefault(c, phrase)
    return [(c, found[c]) for c in BLOCKED_CLASSES if c in found]


def _quote(phrase: str, limit: int = 60) -> str:
    phrase = " ".join(phrase.split()).replace('"', "'")
    return phrase if len(phrase) <= limit else phrase[: limit - 1] + "…"
