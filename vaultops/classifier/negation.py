"""When a verb in a request is not asked for: negated, asked about, talked about, quoted or only a noun.

A rule finds a verb and its object; these heuristics decide whether the person wants it done.  "Don't
delete", "why did nginx restart?", "how other teams rotate keys", "list the notes titled 'Delete me'", "the
delete endpoint" all name a dangerous verb and ask for nothing.  Each answers for one position in the
folded text (see ``vocabulary.fold``) and knows no rule or class, so the rules, the outcome phrases and the
type cues share them.  They lean towards "asked for" (a command written out is never only mentioned, "…?
run it" asks): a needless escalation costs the person one answer, a missed one can cost data or money.
"""

from __future__ import annotations

import re

# --- negation and noun use ----------------------------------------------------------------------------------
# A negation directly before the verb, possibly with up to two of _NEG_SKIP between ("не надо удалять").
_NEG = frozenset(
    {
        "don't",
        "dont",
        "never",
        "mustn't",
        "shouldn't",
        "won't",
        "cannot",
        "can't",
        "without",
        "avoid",
        "no",
        "doesn't",
        "didn't",
        "нельзя",
        "незачем",
        "не",
        "ни",
        "без",
    }
)
_NEG2 = frozenset(
    {
        ("do", "not"),
        ("does", "not"),
        ("did", "not"),
        ("must", "not"),
        ("should", "not"),
        ("shall", "not"),
        ("will", "not"),
        ("can", "not"),
        ("not", "to"),
    }
)
_NEG_SKIP = frozenset(
    {
        "ever",
        "accidentally",
        "actually",
        "be",
        "get",
        "надо",
        "нужно",
        "стоит",
        "смей",
        "вздумай",
        "ничего",
        "пытайся",
        "было",
        "были",
        "была",
        "быть",
        "будет",
        "будут",
    }
)
_POSTNEG = re.compile(
    r"\s+(?:for\s+)?(?:nothing|none|ничего\s+не|не\s+(?:надо|нужно|стоит|будем"
    r"|требуется))(?!\w)"
    r"(?![^.;!?\n]{0,40}(?:except|but|apart\s+from|other\s+than|besides|save|кроме"
    r"|за\s+исключением)"
    r"(?!\w))"
)
_DET = re.compile(
    r"(?<!\w)(?:the|a|an|this|(?<!after\s)(?<!before\s)(?<!do\s)that|these|those|its|our|my"
    r"|your"
    r"|their|his|each|every|soft|for|pre|post|awaiting|pending)[\s-]+['\"`«“]?$"
)
# "the reload failed", "restart loop": a verb form followed by these is a noun
_NOUN_NEXT = re.compile(
    r"\s+(?:failed|fails|failing|broke|breaks|crashed|crashes|hangs|hung|loops?|errors?"
    r"|errored|timed\s+out|took|takes|is|was|were|are|didn't|doesn't|did\s+not|does\s+not"
    r"|succeeded|worked|works|logs?|step|status|history|window|button|endpoint)(?!\w)"
)


def negated(low: str, start: int, end: int) -> bool:
    """Is low[start:end] directly negated ("don't delete", "ничего не удаляй", "delete nothing")?"""
    if _POSTNEG.match(low, end):
        return True
    if start and not low[start - 1].isspace():  # "no, delete it": only whitespace may separate them
        return False
    words = [w.strip("([{«\"'“") for w in low[max(0, start - 60) : start].split()]
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


_QUESTION = re.compile(
    r"\s*(?:why|how|when|what|which|who|where|did|does|do|was|were|has|have|is|are|should"
    r"|почему|зачем|когда|что|как|кто|где|отчего|нужно\s+ли|надо\s+ли|стоит\s+ли|какие"
    r"|какой"
    r"|какая|каких|сколько|есть\s+ли|свободен|свободна)(?!\w)"
)


SENTENCE_ENDS = ".!?;\n"
CLAUSE_ENDS = ".:;!?\n—–"  # a colon or a dash starts a step of its own too


def clause_start(low: str, pos: int, ends: str = SENTENCE_ENDS) -> int:
    """Where the sentence (or, with CLAUSE_ENDS, the clause) holding ``pos`` starts; a dot inside a name
    ("out.txt", "local.toml") ends nothing."""
    start = max(low.rfind(c, 0, pos) for c in ends) + 1
    while (
        start > 1 and low[start - 1] == "." and low[start - 2].isalnum() and low[start : start + 1].isalnum()
    ):
        start = max(low.rfind(c, 0, start - 1) for c in ends) + 1
    return start


_END = re.compile(r"[!?;\n]|\.(?!\w)")  # a dot inside a name ("local.toml?") does not end a sentence


def _clause_asks(low: str, pos: int, opening: re.Pattern[str]) -> bool:
    """The sentence around ``pos`` ends in a question mark and starts as ``opening`` says."""
    start = clause_start(low, pos)
    found = _END.search(low, pos)
    end = found.start() if found else len(low)
    return end < len(low) and low[end] == "?" and opening.match(low, start) is not None


def in_question(low: str, pos: int) -> bool:
    """The word at ``pos`` sits in a clause like "why did nginx restart?": it asks, it does not request."""
    return _clause_asks(low, pos, _QUESTION)


# "what does `git merge` do?", "how many seats are we paying for?": a question that asks about a thing
_ASKS = re.compile(
    r"\s*(?:(?:what|why|how|when|where|who|which)(?:\s+[\w'`-]+){0,3}?\s+(?:does|do|did|is|are"
    r"|was|were|has|have|had|will|would|should|happens|happened)|(?:what|how|where|who)['’]?s"
    r"|(?:would|could|should|is|will)\s+it\s+(?:be\s+)?(?:safe|ok|okay|wise|fine|smart|risky"
    r"|a\s+good\s+idea|worth)|should\s+(?:we|i)|как\s+\w+(?:ть|ти|чь)(?:ся)?|почему|зачем"
    r"|кто|где|какие|какой"
    r"|какая|каких|сколько|что\s+(?:делает|значит|будет|случится|происходит)|как\s+(?:работает"
    r"|устроен\w*|часто|давно))(?!\w)(?!\s+(?:not|if|about|don't|doesn't|не|если|бы)(?!\w))"
)
_TRY_IT = re.compile(
    r"(?<!\w)(?:(?:run|try|execute|do|apply|use)\s+(?:it|that|this|them)|go\s+ahead|запусти"
    r"|выполни|сделай\s+это|попробуй|by\s+running|running\s+it)(?!\w)"
)


# "explain what `rm -rf` does": the command is the subject, up to the first "then" or "and"
_EXPLAIN = re.compile(
    r"\s*(?:explain|describe|tell\s+me|show\s+me|объясни\w*|расскажи"
    r"|опиши)[\s,]+(?:in\s+plain"
    r"\s+words\s+)?(?:what|how|why|the\s+differences?|что|как|зачем|разниц\w*)(?!\w)"
)
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
_ABOUT = re.compile(
    r"(?:(?<!\w)how\s+(?:to|do|does|did|would|could|should|can|other|others|people|teams"
    r"|companies|they|we|you|i|one)(?:\s+[^\s.:;!?]+){0,3}|(?:cost|costs|price|cheaper"
    r"|expensive)\s+(?:us\s+|me\s+)?to|(?<!\w)whether\s+(?:or\s+not\s+)?(?:to|we\s+should|i\s+should)"
    # "estimate our spend if we add 5 seats": a hypothesis priced, not a step
    r"|(?:estimate|calculate|cost|costs|spend|price|bill|budget|much|would|happens?)[^.!?\n]{0,60}?(?<!\w)if\s+"
    r"(?:we|i|you|they)(?:\s+(?:were\s+to|ever|just|also))?"
    # the words to be written: "append a line to todo.txt saying buy milk"
    r"|(?<!\w)(?:saying|that\s+says|which\s+says|that\s+reads|reading|with\s+the\s+(?:text|words?|line"
    r"|content)|containing|that\s+contains)"
    r"|(?<!\w)(?:ways?|options?|ideas?|tips|examples?|guide|docs?|documentation"
    r"|tutorial|plan|proposal|strategy|checklist|runbook|roadmap|outline|rfc"
    r"|estimate)\s+(?:to|for|on|about)"
    r"|(?<!\w)(?:hypothetically|suppose|imagine|if\s+(?:we|i|you|they)\s+(?:had|were|was"
    r"|ever)\s+to"
    r"|гипотетически|если\s+бы|допустим)(?:[\s,]+[^\s.:;!?]+){0,4}"
    r"|(?<!\w)remind\s+me\s+(?:\S+\s+){0,3}?to|(?<!\w)(?:walk|talk|take)\s+(?:me|us)\s+through"
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
    r"|i'd\s+rather))\s+[`'\"«“]?$"
)
_DO_IT = re.compile(
    r"[^\n]*?(?:(?:and|then)\s+(?:do|apply|run|execute|carry\s+out|follow"
    r"|implement)\s+(?:it|that"
    r"|them|the\s+plan)|go\s+ahead|сделай\s+это"
    r"|и\s+сделай|и\s+примени)"
)


def talked_about(low: str, start: int) -> bool:
    """Is the verb at ``start`` the subject of talk ("research how teams rotate keys"), not a request?
    Not when the request goes on to ask for it ("find out how to purge them, then do it")."""
    clause = clause_start(low, start, CLAUSE_ENDS)
    if _CONTENT_COLON.search(low, max(0, clause - 40), clause) is not None:
        return _DO_IT.match(low, start) is None  # "create todo.txt with: buy milk, call mom": the words
    return _ABOUT.search(low, max(clause, start - 60), start) is not None and _DO_IT.match(low, start) is None


# a colon after which come the words to be written
_CONTENT_COLON = re.compile(
    r"(?<!\w)(?:with|containing|saying|says|reads|reading|text|content|contents|lines?)"
    r"\s*:\s*$"
)


# a clause that reads, finds or reports ("list the SMS templates", "find the note titled 'Delete me'")
_READ_START = re.compile(
    r"\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:list|find|search|show"
    r"|tell\s+me|summari[sz]e"
    r"|translate|proofread|read|count|check|look\s+(?:at|for|up|through)|review"
    r"|describe|grep|explain|research|compare|investigate|document|outline|study"
    r"|analy[sz]e|audit|assess|evaluate|estimate|learn\s+about|read\s+up\s+on|find\s+out"
    r"|figure\s+out|look\s+into|(?:write|draft)\s+(?:up|docs?|documentation|(?:an?\s+)?(?:doc"
    r"|guide|summary|note|explainer|overview|comparison|report|faq|runbook|proposal"
    r"|memo))"
    r"|locate|quote|cite|перечисли|найди|покажи|прочитай|проверь|посмотри|кратко"
    r"|перескажи)(?!\w)"
)
_STEP_SEP = re.compile(
    r"(?<!\w)(?:then|and|also|after|you|u|way\s+to|how\s+to|by|via|through|to|so|until"
    r"|unless|if"
    r"|when|и|затем|потом|после|чтобы|через|если|пока)(?!\w)"
    r"|,\s*[^\W\d_]+\s"
)
_COMMAND = re.compile(
    r"(?:sudo\s+)?(?:rm|rmdir|dd|mkfs\S*|git|chmod|chown|curl|wget|kill|systemctl"
    r"|truncate|shred"
    r"|drop\s+(?:table|database|schema))(?:\s+-|\s+/|\s+~|\s+\w+\s+-)"
)


# a text that is read, and the clause that says what is in it: "the thread where …", "the email asking …"
_TOLD = re.compile(
    r"(?<!\w)(?:thread|conversation|e-?mail|message|discussion|note|meeting|chat|call|ticket"
    r"|issue|doc\w*|minutes|transcript|post|comment|review|report|letter|request|decision)s?\s+"
    r"(?:where|in\s+which|when|that|which|about\s+how|saying|asking|about|on\s+whether)(?!\w)"
)
_STRONG_SEP = re.compile(
    r"(?<!\w)(?:then|also|afterwards|after\s+that|next|please|pls|and\s+(?:then|also"
    r"|please|go|do))(?!\w)|[;:]"
)
_ACTS = re.compile(
    r"[^\n]*?(?<!\w)(?:do\s+(?:it|that|this|so|them)|handle\s+it|action\s+it|go\s+ahead|proceed"
    r"|take\s+care\s+of|make\s+it\s+(?:so|happen)|carry\s+(?:it\s+)?out)(?!\w)"
)


# words after which an -ing verb is a topic ("a guide on rotating keys"), not a participle that acts
_TOPIC_WORDS = frozenset(
    [
        "about",
        "on",
        "of",
        "for",
        "how",
        "the",
        "a",
        "an",
        "and",
        "or",
        "without",
        "before",
        "after",
        "by",
        "when",
        "while",
        "from",
        "into",
        "to",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "stop",
        "avoid",
        "consider",
        "considering",
        "regarding",
        "like",
        "vs",
        "versus",
        "between",
        "than",
    ]
)


def mentioned(low: str, pos: int, phrase: str) -> bool:
    """The words at ``pos`` are what a reading step reads about, not a step of their own: its clause starts
    with list, find, summarise, check, … and no "then", "and" or "you" leads to them.  A command written
    out (``rm -rf ~``) is never only mentioned."""
    m = _READ_START.match(low, clause_start(low, pos, CLAUSE_ENDS))
    first = phrase.split()[0] if phrase.split() else ""
    if m is None:
        return False
    told = _TOLD.search(low, m.end(), pos)
    if told is not None and _STEP_SEP.search(low, m.end(), told.start()) is None:
        # "summarise the thread where the client asked us to delete their account": what the thread says
        return _STRONG_SEP.search(low, told.end(), pos) is None and _ACTS.match(low, pos) is None
    if _STEP_SEP.search(low, m.end(), pos + len(first)) is not None:
        return False
    before = low[max(m.end(), pos - 30) : pos].split()
    if first.endswith("ing") and before and before[-1] not in _TOPIC_WORDS:
        return False  # "audit the buckets deleting anything stale": a participle that acts
    if re.match(r"\s+[-/~.$]", low[m.end() :]):
        return False  # "find /data -delete", "grep -rl …": the command, not the English verb
    return _COMMAND.match(phrase) is None


_IN_A_FILE = re.compile(
    r"[^.;!?\n]{0,60}?\s(?:in|from|of|inside"
    r"|within)\s+(?:the\s+)?(?:[\w'-]+\s+)?[\w./-]+\.(?:md"
    r"|txt|py|pyi|js|mjs|ts|tsx|jsx|go|rs|rb|java|kt|swift|c|h|cc|cpp|cs|php|sh|css"
    r"|scss|html"
    r"|vue|svelte|toml|ya?ml|json|ini|cfg|tex|rst)(?!\w|\.\w)"
)
_WHOLE = re.compile(
    r"(?<!\w)(?:files?|folders?|dir\w*|notes?\b(?!\s+(?:about|on))|everything|all|whole"
    r"|entire"
    r"|contents|rows|records|tables?|database|db|backups?|logs?)(?!\w)"
)


_OPEN_QUOTE = re.compile(r"(?:^|(?<=[\s(\[:]))['\"«“‘]")


# before a quotation: a verb that runs it, a command that takes it, or an option ("psql -c '…'")
_RUN_QUOTE = re.compile(
    r"(?<!\w)(?:run|execute|exec|eval|type|paste|do|запусти|выполни|psql|mysql|sqlite3"
    r"|sh|bash"
    r"|zsh|python\d?|node|ruby|perl|ssh|redis-cli|mongo\w*|sudo|echo|xargs)(?!\w)"
    r"|(?:^|\s)-{1,2}[a-z]"
)


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
    before = low[clause : opens[-1].start()]
    return _RUN_QUOTE.search(before) is None


def inside_a_file(low: str, pos: int) -> bool:
    """ "Delete the empty line at the end of todo.md": an edit inside a text file, which git keeps, not a
    deletion of the file or of data."""
    m = _IN_A_FILE.match(low, pos)
    return m is not None and _WHOLE.search(low, pos, m.end() - 1) is None


_DET_WORD = re.compile(
    r"(?<!\w)(?:the|a|an|my|our|your|this|that|their)\s+(?!(?:old|new|whole|entire"
    r"|current|last"
    r"|first|same|other)\s)[a-z][\w-]+\s+$"
)
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


# a verb at the start of a clause, or after one of these words, is an imperative ("please text me")
_IMPERATIVE_AFTER = frozenset({"please", "pls", "kindly", "and", "then", "also", "just", "you", "to"})


def imperative_at(low: str, start: int) -> bool:
    """Is the word at ``start`` the first of its clause ("Hi team, text the plumber"), or after "please",
    "and", "you", ...?"""
    before = low[max(0, start - 20) : start].rstrip()
    if not before or before[-1] in ".!?;:,\n—–-)»\"'":
        return True
    words = before.split()
    return bool(words) and words[-1] in _IMPERATIVE_AFTER
