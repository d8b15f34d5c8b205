"""Changing vaultops's or the agent's own settings is a change to system files.

"Set gate = none on the worker-code profile in local.toml", "turn off the sandbox", "disable hooks", "edit
.claude/settings.json", "add Bash(*) to the allow list", "make the reviewer auto-approve": each takes down
a wall that keeps a job inside its bounds, and no job may do that for itself.  Three kinds of object: the
files that hold the settings (any change counts), the settings themselves (a change counts), and the
safety controls (switching one off, skipping or loosening it counts; building "a React hook" does not).
Pure: folded text in, findings out; a question, a topic of talk or a negated phrase asks for nothing
(``outcomes.reports``).
"""

from __future__ import annotations

from vaultops.classifier.blocked import SYS
from vaultops.classifier.phrases import Phrases

# the files: vaultops's local overrides and config, Claude Code's settings, its MCP list
_FILES = (
    r"(?:[\w./~-]*/)?local\.toml|(?:~/)?\.claude(?:/[\w./*-]*)?(?!\w)|(?:\.claude/)?settings(?:\.local)?"
    r"\.json|\.mcp\.json|(?:~/)?\.vaultops(?:/[\w./*-]*)?|\.claude\.json"
)
# the settings in them, by their names and by what they say
_SETTINGS = (
    r"gate\s*(?:=|:)|gate\s+(?:to|setting|mode|level|config\w*|value|option)(?!\w)"
    r"|permissions?\.(?:allow|deny|ask)|permission[\s_-]*mode|default[\s_-]*mode|bypass[\s_-]*permissions"
    r"|(?:agent|claude|tool|bash|worker|job)(?:'s)?\s+permissions?|dangerously[\w-]*|skip[\s_-]*permissions"
    r"|allowed[\s_-]*(?:tools|domains|commands|hosts|roots|paths)|allow[\s_-]*unsandboxed[\w-]*"
    r"|fail[\s_-]*if[\s_-]*unavailable|(?:allow|deny|ask)[\s_-]*(?:write|read)\w*"
    r"|auto[\s_-]*approv\w*|approval\s+(?:polic\w*|rules?|mode|settings?|table|requirements?)"
    r"|polic(?:y|ies)\s+(?:rules?|table|file|entries|entry)|(?:approval|safety|gate|vaultops|agent|tool"
    r"|command|permission)\s+polic(?:y|ies)"
    r"|(?:budget|spend(?:ing)?|cost|turn|token)s?\s+(?:caps?|ceilings?)|max[\s_-]*(?:turns|budget\w*|cost\w*"
    r"|spend\w*)|daily[\s_-]*budget\w*|per[\s_-]*job[\s_-]*budget"
    r"|[\w-]*worker[\w-]*\s+profiles?|(?:agent|job|code|research|review|default|quick|heavy|light)\s+profiles?"
    r"(?!\s+(?:pages?|pictures?|photos?|cards?|views?|components?|endpoints?|forms?|avatars?))"
    r"|sandbox(?:ing)?\s+(?:settings?|config\w*|rules?|domains?|network|mode|allow\w*|filesystem|options?)"
    r"|network\s+(?:allow[\s_-]*list|allowed[\s_-]*domains|polic\w*)|(?:allow|deny)[\s_-]*list"
    r"|allowlist|denylist|hooks?\s+(?:settings?|config\w*)|(?:pre|post)[\s_-]*tool[\s_-]*use"
    r"|mcp\s+servers?|yolo\s+mode|tools?\s+lists?|fail[\s_-]*open|vaultops_[a-z_]+|claude_code_[a-z_]+|deny\s+rules?"
)
# the walls: switching one off is the harm, building one is not
_CONTROLS = (
    r"(?:the\s+|its\s+|our\s+|your\s+|all\s+(?:the\s+)?|every\s+)?(?:sandbox(?:ing)?|gate|gating|fence"
    r"|guard\s*rails?|(?:pre|post)[\s_-]*tool[\s_-]*use(?:\s+hooks?)?|hooks"
    r"|(?:claude|vaultops|agent|gate|safety|approval|permission|session[\s_-]*start|stop"
    r"|user[\s_-]*prompt[\s_-]*submit)(?:'s)?\s+hooks?|(?:approval|permission|confirmation)(?:s|\s+(?:checks?"
    r"|prompts?|steps?|requirements?|gates?))?(?!\s+(?:e-?mails?|messages?|notifications?|status|page"
    r"|docs?|flow|button|form)(?!\w))|(?:code\s+)?review\s+(?:step|checks?|gate|stage|requirement)"
    r"|reviewer(?!'s)|safety\s+(?:checks?|rails?|rules?|nets?|settings?|class(?:es)?)"
    r"|(?:agent|claude|worker|job)(?:'s)?\s+(?:restrictions?|limits?|sandbox|fence|rules?)|deny\s+(?:rules?|list)"
    r"|network\s+(?:restrictions?|limits?|rules?))(?!\w)"
)
_CHANGE = (
    r"(?:set|change|changing|edit|editing|modify|modifying|update|updating|tweak|tweaking"
    r"|adjust|adjusting|alter|altering|add|adding|append|appending|insert|put|putting|remove|removing"
    r"|delete|deleting|drop|dropping|raise|raising|increase|increasing|bump|bumping|lift|lifting"
    r"|loosen|loosening|relax|relaxing|widen|widening|extend|extending|expand|expanding|flip|flipping"
    r"|toggle|toggling|allow|allowing|whitelist|grant|configure|configuring|rewrite|rewriting"
    r"|overwrite|overwriting|replace|replacing|reset|resetting|clear|clearing|empty"
    r"|comment\s+out|uncomment|open\s+up|(?:make|making)(?!\s+sure)|let(?!'s|\s+(?:me|us)(?!\w))|switch|switching|turn|turning|enable|enabling|disable"
    r"|disabling|strip|stripping|patch|patching|swap|swapping|point|pointing)(?!\w)"
)
_WEAKEN = (
    r"(?:disable|disabling|deactivate|deactivating|turn(?:ing)?\s+(?:\S+\s+){0,3}?off|switch(?:ing)?"
    r"\s+(?:\S+\s+){0,3}?off|turn\s+of|shut(?:ting)?\s+(?:\S+\s+){0,3}?off|remove|removing|delete|deleting|drop"
    r"|dropping|skip|skipping|bypass|bypassing|circumvent\w*|override|overriding|ignore|ignoring"
    r"|pause|pausing|suspend\w*|(?:stop|stopping)\s+(?:using|running|requiring|enforcing|applying"
    r"|honou?ring|checking)|rip(?:ping)?\s+out|strip|stripping|loosen"
    r"|loosening|relax|relaxing|weaken\w*|lift|lifting|get(?:ting)?\s+rid\s+of|comment(?:ing)?\s+out"
    r"|neuter\w*|silenc\w*|mute|muting|uninstall\w*|unhook\w*|escape|escaping|get\s+around"
    r"|work\s+around|go\s+around|no\s+longer\s+(?:use|run|need|require)|do\s+without|drop)(?!\w)"
)
# a word between the verb and its object; "a test for", "a summary of", "the docs on" make the object a topic
_TOPIC = (
    r"(?:about|regarding|explaining|describing|documenting|summari\w*|docs?|documentation|readme|tests?|notes?"
    r"|sections?|pages?|guides?|articles?|posts?|comments?|docstrings?|wording|copy|typos?|explainers?"
    r"|summar(?:y|ies)|lists?|comparisons?|overviews?|parsers?|validators?|functions?|methods?|class(?:es)?|modules?)(?!\w)"
)
_RU_CHANGE = (
    r"(?:отключ|выключ|убер|убра|удал|сним|ослаб|обойд|пропуст|поменя|измен|смен|постав|установ|выстав"
    r"|добав|пропиш|разреш|отредактир|поправ|подним|увелич|расшир)\w*"
)
_RU_OBJECT = (
    r"(?:песочниц\w*|гейт\w*|gate|хук\w*|hooks?|sandbox|(?:[\w./~-]*/)?local\.toml|\.claude\S*"
    r"|settings\.json|allow[\s_-]*list|бел\w*\s+спис\w*|разрешени\w*|бюджет\w*|лимит\w*|ревью\w*"
    r"|ревьюер\w*|одобрени\w*|политик\w*|профил\w*|проверк\w*\s+(?:безопасност|одобрени)\w*)(?!\w)"
)
_WORD = r"[^\s.!?;]+(?:\.[^\s.!?;]+)*"  # a dot inside a word (example.com) does not end the sentence
_GAP = r"[\s,]+(?:(?!" + _TOPIC + ")" + _WORD + r"[\s,]+){0,5}?"
# switching a wall off is never a topic: "turn off, for this job only, the hooks"
_WEAK_GAP = r"[\s,]+(?:" + _WORD + r"[\s,]+){0,5}?"
_PATTERNS = (
    _CHANGE + _GAP + r"(?:the\s+|my\s+|our\s+|your\s+)?(?:[\w-]+\.)*(?:" + _FILES + "|" + _SETTINGS + ")",
    _WEAKEN + _WEAK_GAP + _CONTROLS,
    r"(?:turn|switch|shut)\w*\s+" + _CONTROLS + r"\s+(?:\S+\s+)?off(?!\w)",  # "turn the sandbox off"
    # "In local.toml, set gate to none", "in .claude/settings.json: add ..."
    r"(?:in|inside|within|to|of)\s+(?:the\s+|my\s+|our\s+)?(?:"
    + _FILES
    + r")[\s,:]+(?:\S+\s+){0,3}?"
    + _CHANGE,
    # "open local.toml and comment out the gate line"
    r"open\s+(?:the\s+|my\s+)?(?:" + _FILES + r")\s+(?:and|then)\s+(?!(?:read|look|check|show|tell|see"
    r"|explain|summari|list|find|count|print|quote|report|describe)\w*)\w+",
    # "make the reviewer auto-approve", "have the gate approve everything"
    r"(?:make|have|let|set|configure|tell|get|teach|change|allow)\w*\s+(?:the\s+|our\s+)?(?:\S+\s+){0,2}?"
    r"(?:reviewer|gate|agent|claude|worker|vaultops|hook|review\s+step|approver|checks?)s?\s+(?:to\s+)?"
    r"(?:\S+\s+){0,2}?(?:auto-?approv\w*|approve\s+(?:everything|all|anything|every\w*)|approve[^.!?\n]{0,40}?automatically|always\s+(?:approve"
    r"|allow|pass|say\s+yes)|rubber-?stamp\w*|wave\s+(?:\S+\s+){0,3}?through|pass\s+everything|allow\s+everything"
    r"|skip\s+(?:the\s+)?(?:gate|review|checks?|sandbox|hooks?|approval))",
    # "give the research profile Bash access", "let the agent read ~/.ssh", "stop the gate from asking"
    r"(?:give|grant)\w*\s+(?:the\s+|our\s+)?(?:\S+\s+){0,2}?(?:profiles?|agents?|claude|workers?|jobs?|reviewers?"
    r"|sandbox)\s+(?:\S+\s+){0,2}?(?:access|permissions?|rights|tools?)(?!\w)",
    r"(?:let|allow|permit)\w*\s+(?:the\s+)?(?:agent|claude|worker|jobs?|reviewer|it)\s+(?:to\s+)?(?:write|read|access"
    r"|reach|touch|edit|run|use|push|connect|open)\w*\s+(?:\S+\s+){0,3}?(?:anywhere|everywhere|~\S*|/(?=\s|$)"
    r"|(?:my\s+|the\s+)?home|\S*\.ssh|\S*\.env|\S*credentials?|outside|the\s+(?:network|internet|web)"
    r"|any\s+(?:domain|site|host|url|command|path)s?)(?!\w)",
    r"(?:stop|keep|prevent)\w*\s+(?:the\s+)?(?:gate|sandbox|hooks?|reviewer|claude|agent|vaultops)\s+from\s+"
    r"(?:asking|blocking|checking|prompting|stopping|denying|escalating)",
    r"(?:configure|set|make|tell|get|have|change|let)\w*\s+(?:\S+\s+){0,3}?(?:to\s+)?(?:never|not|no\s+longer"
    r"|stop)\s+(?:to\s+)?(?:ask|prompt|check|block|escalat)\w*\s+(?:\S+\s+){0,2}?(?:permission|approval"
    r"|confirmation)s?",
    # Russian: "отключи песочницу", "поменяй gate на none в local.toml"
    _RU_CHANGE + r"\s+(?:\S+\s+){0,4}?" + _RU_OBJECT,
    _RU_OBJECT + r"\s+(?:\S+\s+){0,3}?" + _RU_CHANGE,
    # "allow all Bash commands", "Bash(*)", "--dangerously-skip-permissions"
    r"(?:allow|permit|let|whitelist|grant)\w*\s+(?:the\s+agent\s+|claude\s+|the\s+worker\s+|it\s+|jobs?\s+)?"
    r"(?:to\s+(?:run|use)\s+)?(?:all|any|every|arbitrary|unrestricted|unsandboxed)\s+(?:\S+\s+)?(?:bash"
    r"|shell|commands?|tools?|network(?:\s+access)?|writes?)(?!\w)"
    r"|bash\s*\(\s*\*\s*\)|--?dangerously[\w-]*|bypass[\s_-]*permissions|--permission-mode\s+\S+"
    r"|(?:run|start|launch)\w*\s+(?:\S+\s+){0,3}?(?:outside|without)\s+(?:the\s+)?(?:sandbox|gate|hooks)",
)


_PHRASES = Phrases(SYS, _PATTERNS)


def find(low: str) -> list[tuple[str, str]]:
    """[(system-files, phrase)] when ``low`` (vocabulary.fold of the text) asks to change vaultops's or the
    agent's own settings, or to switch off one of its walls; [] otherwise."""
    return _PHRASES.find(low)
