"""Spending said with everyday verbs: a plan, a tier, a bigger machine, a renewal, a booking.

"Upgrade us to the Pro plan", "switch the account to annual billing", "go for the bigger instance", "renew
acme.com", "get us the team tier": no word of these is "buy" or "pay", and each puts a charge on the
person's card.  The verbs are everyday ones (switch, move, go for, get, renew, book) whose harm is their
object, so these patterns read the verb together with a paid object: a paid tier, a billing period, a
bigger size, a registration or subscription, a seat, a booking.  Pure: folded text in, findings out; a
question, a topic of talk or a negated phrase asks for nothing (``outcomes.reports``).
"""

from __future__ import annotations

from vaultops.classifier.blocked import SPEND
from vaultops.classifier.phrases import Phrases

# a paid tier or a billing period: what "switch to", "move us onto", "get us" spend money on
_TIER = (
    r"(?:pro|premium|paid|business|enterprise|team|teams|plus|max|growth|scale|starter|standard"
    r"|professional|ultimate|unlimited|lifetime|annual|yearly|monthly|quarterly|pay-?as-?you-?go"
    r"|metered|usage-?based|higher|bigger|larger|priority|premier|platinum|org|organization)(?!\w)"
)
# what is talked about, not bought: "the annual subscription revenue", "the monthly billing report"
_ABOUT_IT = (
    r"(?!\s+(?:revenue|reports?|documents?|features?|benefits?|limits?|data|numbers|metrics|stats|counts?|lists?|page|ids?|tables?|history"
    r"|invoices?|e-?mails?|status|details|info|docs?|prices?|pricing|costs?|options|comparison|alerts?"
    r"|notifications?|dashboard|exports?|module|code|tests?|api|webhooks?|logic|flow|model)(?!\w))"
)
_PLANWORD = (
    r"(?:plans?|tiers?|subscriptions?|memberships?|licen[cs]es?|editions?|packages?|bundles?"
    r"|billing|seats?|contracts?|add-?ons?)(?!\w)" + _ABOUT_IT
)
# said alone after "to": "switch billing to yearly", "upgrade to Pro"
_BARE_TIER = r"(?:pro|premium|paid|enterprise|business|plus|pay-?as-?you-?go)"
# a thing that is paid for by its size: "the bigger instance", "a 16GB droplet"
_SIZED = (
    r"(?:instances?|droplets?|vps|servers?|box(?:es)?|machines?|dynos?|plans?|tiers?|nodes?|add-?ons?|compute"
    r"|subscriptions?"
    r"|clusters?|database|db|disks?|volumes?|storage|gpus?|ram|memory)(?!\w)"
)
_BIGGER = (
    r"(?:bigger|larger|beefier|more\s+powerful|next[\s-]+size(?:[\s-]+up)?|higher|faster|dedicated"
    r"|premium|\d+\s*(?:gb|tb|gib|tib|vcpus?|cpus?|cores?|x))"
)
# a version is software, not a size: "upgrade the database to Postgres 16"
_SOFTWARE = (
    r"(?:v?\d[\d.]*(?!\s*(?:gb|tb|gib|tib|vcpus?|cpus?|cores?|x)(?!\w))|version|the\s+latest|latest"
    r"|python|node|postgres\w*|mysql|redis|ubuntu|debian|alpine|fedora|centos|rhel|macos|windows"
    r"|k8s|kubernetes|java|ruby|go|php|rust|django|rails|react|next\.js|vue|angular|lts|stable"
    r"|nightly|beta)(?!\w)"
)
# a size or a tier said by its name: "Standard-2X", "db-4xlarge", "Performance-M"
_SIZE_NAME = (
    r"[\w.-]*(?:\d+\s*(?:gb|tb|x|vcpus?|cpus?|cores?)|x?large|medium|small|micro|nano|standard"
    r"|performance|premium|pro|plus|business|enterprise|dedicated|compute|basic|hobby|starter|scale"
    r"|launch|team)(?![\w.-]*\.(?:com|io|dev|org))[\w.-]*"
)
_TLD = r"(?:com|net|org|io|dev|ai|app|co|xyz|me|ru|sh|so|gg|tech|site|cloud|de|uk|eu|fr|nl|us|ca|info|biz)"
_WHO = r"(?:us|me|them|him|her|it|the\s+\w+|our\s+\w+|my\s+\w+|this\s+\w+)"
# A verb in the past tense reports ("why we moved to annual billing"): the verbs below end in (?<![^e]ed).
_PATTERNS = (
    # "switch the account to annual billing", "move us onto the Team plan", "change our plan to Enterprise"
    r"(?:switch|move|put|get|bring|take|go|change|convert|upgrad|migrat|sign|opt|bump|flip|transition"
    r"|graduat|step|want|need|enrol|join|be)\w*(?<![^e]ed)\s+(?:up\s+)?(?:\S+\s+){0,6}?(?:to|onto|into|on|for|in)\s+"
    r"(?:the\s+|a\s+|an\s+)?(?:(?:[\w.-]+\s+)?"
    + _TIER
    + r"[\s-]+(?:\S+\s+)?(?:"
    + _PLANWORD
    + r"|payments?(?!\w))|\d[\w.-]*\s+(?:plan|tier|package)(?!\w)|[\w.-]+\s+tier(?!\w)|"
    + _BARE_TIER
    + r"(?=\s*(?:[.,;!?)]|$|\s+(?:now|today|asap|please|and|then|from|starting|next|this|before|on|for|at|in"
    r"|with|by)(?!\w))))",
    # "switch billing to yearly", "move us to annual" (not "switch the chart to yearly")
    r"(?:switch|move|chang|convert|put|go|bring|take|flip)\w*(?<![^e]ed)\s+(?:\S+\s+){0,4}?(?:us|me|them"
    r"|billing|plans?|subscriptions?|accounts?|payments?|invoic\w*|contracts?|workspaces?|seats?|licen[cs]es?|orgs?"
    r"|organi[sz]ations?|teams?|projects?)"
    r"\s+(?:\S+\s+){0,3}?(?:to|onto|into|on)\s+(?:an?\s+|the\s+)?(?:annual|yearly|quarterly)(?!\w)",
    # "go for the bigger instance", "size up the droplet to 8GB", "bump the box to 16GB"
    r"(?:go|opt|pick|choose|take|switch|move|upgrad|bump|size|scal|resiz|get|grab|rent|spin)\w*(?<![^e]ed)\s+(?:up\s+)?"
    r"(?:\S+\s+){0,4}?(?:for|with|to|into|onto|up)?\s*(?:the\s+|a\s+|an\s+|our\s+)?"
    + _BIGGER
    + r"\s+(?:\S+\s+)?"
    + _SIZED,
    r"(?:upgrad|downgrad|bump|resiz|scal|siz)\w*(?<![^e]ed)\s+(?:up\s+)?(?:the\s+|our\s+|my\s+)?(?:\S+\s+){0,2}?"
    + _SIZED
    + r"\s+(?:up\s+)?to\s+(?!"
    + _SOFTWARE
    + r")\S+",
    # "convert our Heroku dynos to Standard-2X": a size or a tier by its name, not a region or a version
    r"(?:convert|switch|chang|mov)\w*(?<![^e]ed)\s+(?:the\s+|our\s+|my\s+)?(?:\S+\s+){0,2}?"
    + _SIZED
    + r"\s+to\s+"
    r"(?:the\s+)?" + _SIZE_NAME,
    # "throw another $20 at the OpenAI balance", "commit to a 1-year reserved instance"
    r"(?:throw|chuck|sink|drop|dump|pour|blow|spend|put|load)\w*\s+(?:\S+\s+){0,2}?[$€£]\s*\d[\d.,]*k?\s+"
    r"(?:at|on|into|to|towards|in)(?!\w)",
    r"(?:commit|buy|get|purchase|switch|move|go|sign|take|lock)\w*\s+(?:\S+\s+){0,4}?(?:reserved\s+(?:instances?"
    r"|capacity|nodes?)|savings\s+plans?|committed[\s-]use)(?!\w)",
    # "add the Advanced Security add-on", "increase our contact limit to 5000"
    r"(?:add|enabl|activat|buy|get|purchas|turn\w*\s+on)\w*\s+(?:\S+\s+){0,4}?(?<!write\san\s)add-?ons?(?!\w)",
    r"(?:rais|increas|bump|lift|doubl)\w*\s+(?:\S+\s+){0,3}?(?:contacts?|seats?|users?|members?|e-?mails?"
    r"|sends?|storage|bandwidth|usage|minutes|credits?)\s+(?:limit|quota|allowance|cap)s?\s+to\s+\d",
    # "renew acme.com", "extend the domain registration", "extend our Zoom subscription"
    r"(?:renew|extend|prolong)\w*(?<![^e]ed)\s+(?:\S+\s+){0,3}?(?:[\w-]+\."
    + _TLD
    + r"|registrations?|domains?"
    r"|subscriptions?|licen[cs]es?|contracts?|leases?|memberships?|warrant(?:y|ies)|support\s+(?:plan"
    r"|contract)|plans?|seats?|hosting|trials?)(?!\w|\.\w)",
    # "turn on overage billing", "enable pay-as-you-go", "activate the paid plan"
    r"(?:activat|enabl|turn\w*\s+on|switch\w*\s+on|flip\w*\s+on|opt\w*\s+in(?:to)?|start|set\w*\s+up)\w*\s+"
    r"(?:\S+\s+){0,3}?(?:overages?|overage\s+billing|pay-?as-?you-?go|auto-?renew\w*|auto-?recharg\w*"
    r"|auto-?top-?ups?|metered\s+billing|usage-?based\s+billing|billing(?!\s+(?:alerts?|notifications?"
    r"|e-?mails?|page|dashboard|docs?|reports?|exports?|history|module|code|tests?|api|webhooks?))"
    r"|(?:paid|pro|premium|business|enterprise|team)\s+(?:\S+\s+)?" + _PLANWORD + r")",
    # "auto-renew: turn it on", "overages - enable them"
    r"(?:auto-?renew\w*|auto-?recharg\w*|auto-?top-?ups?|overages?|pay-?as-?you-?go|(?:annual|yearly)\s+billing)"
    r"[\s:,—–-]+(?:\S+\s+){0,2}?(?:(?:turn|switch|flip)\w*\s+(?:it\s+|them\s+)?on|enabl\w*|activat\w*"
    r"|(?:set|switch)\w*\s+(?:it\s+)?to\s+(?:on|yes|true))(?!\w)",
    # "get us the team tier", "pick up the annual Notion plan", "take the Business plan"
    r"(?:get|grab|pick\s+up|take|buy|order|purchase|secure)\w*\s+(?:us\s+|me\s+|them\s+)?(?:up\s+)?"
    r"(?:for\s+|on\s+|onto\s+)?(?:the\s+|a\s+|an\s+)?(?:[\w.-]+\s+)?" + _TIER + r"\s+(?:\S+\s+)?" + _PLANWORD,
    # "let's do the annual plan", "choose the Business tier", "level up our Zapier plan"
    r"(?:do|choos|select|pick|start|begin|go\s+with|settle\s+on|lock\s+in)\w*(?<![^e]ed)\s+(?:us\s+|me\s+)?"
    r"(?:the\s+|a\s+|an\s+|our\s+)?(?:[\w.-]+\s+)?" + _TIER + r"\s+(?:\S+\s+)?" + _PLANWORD,
    r"level\w*\s+up\s+(?:the\s+|our\s+|my\s+)?(?:\S+\s+)?" + _PLANWORD,
    # "sign off on the Enterprise quote", "accept the renewal offer": agreeing to a vendor's price
    r"(?:sign\s+off\s+on|approv|accept|agree\s+to|countersign)\w*(?<![^e]ed)\s+(?:the\s+|their\s+|this\s+"
    r"|that\s+)?(?:\S+\s+){0,2}?(?:quote|order|purchase(?:\s+order)?|po|renewal|offer|contract|proposal"
    r"|estimate)s?(?!\w)(?![^.!?\n]{0,30}(?:for|to)\s+(?:me|us|review))",
    # "add Datadog APM to our plan", "turn our free account into a Pro one", "get Pro for me on Cursor"
    r"add\w*\s+(?:\S+\s+){0,3}?to\s+(?:our|the|my)\s+(?:\S+\s+)?(?:plan|subscription|bill|invoice|order"
    r"|contract)(?!\w)",
    r"turn\w*\s+(?:\S+\s+){0,4}?into\s+(?:a\s+|an\s+|the\s+)?" + _BARE_TIER + r"\s+(?:one|account|version"
    r"|edition|workspace|plan)(?!\w)",
    r"(?:get|buy|grab|take)\s+(?:us\s+|me\s+)?(?:pro|premium|plus|business|enterprise)(?=\s+(?:for|on|in|at)\s)",
    # "top our AWS credits up with another $200"
    r"top\w*\s+(?:the\s+|our\s+|my\s+)?(?:\S+\s+){0,2}?(?:credits?|balance|account|wallet|card|quota)\s+up(?!\w)",
    # "upgrade us to the cheapest paid one"
    r"upgrad\w*\s+(?:us|me|them|it|the\s+\w+|our\s+\w+)\s+to\s+(?:the\s+|a\s+)?(?:cheapest|cheaper|next"
    r"|higher|bigger|larger|top|paid)(?:\s+paid)?\s+(?:one|option|plan|tier)(?!\w)",
    # "the Postmark plan should be upgraded to the 50k tier"
    r"(?:plans?|tiers?|subscriptions?|accounts?|workspaces?|seats?|licen[cs]es?|domains?|instances?|droplets?"
    r"|vps|dynos?|credits?|memberships?|billing)\s+(?:\S+\s+)?(?:should|must|needs?\s+to|has\s+to|is\s+to"
    r"|are\s+to|to)\s+(?:be|get)\s+(?:upgraded|renewed|extended|bumped|topped\s+up|activated)(?!\w)",
    # "we need the premium tier, go ahead"
    r"(?:need|want|would\s+like|'d\s+like)\s+(?:to\s+(?:be\s+on|have|get|go\s+with)\s+)?(?:the\s+|a\s+|an\s+)"
    + _TIER
    + r"\s+(?:\S+\s+)?"
    + _PLANWORD
    + r"[^.?!\n]{0,40}?(?:go\s+ahead|do\s+it|make\s+it\s+happen"
    r"|sort\s+it|please|asap|now|today)(?!\w)",
    # loan words: "auf den Pro-Plan upgraden", "das Jahresabo buchen"
    r"(?:pro|premium|business|team|enterprise|bezahl|jahres|monats)[\w-]*[\s-]*(?:plan|tarif|abo|tier|version)\w*"
    r"\s+(?:\S+\s+)?(?:upgraden|buchen|kaufen|abonnieren|wechseln|umstellen|bestellen|verlängern|aktivieren)",
    # "book the flights to Berlin", "reserve a hotel room", "pre-order 3 Yubikeys"
    r"(?:book|reserve)\w*\s+(?:us\s+|me\s+|him\s+|her\s+|them\s+)?(?:\S+\s+){0,3}?(?:flights?|hotels?"
    r"|hotel\s+rooms?|tickets?|rental\s+cars?|taxis?|cabs?|ubers?|trains?|accommodation|airbnbs?|venues?"
    r"|coworking|booths?)(?!\w)|pre-?order\w*\s+\S+",
    # "add another user to the paid Slack workspace", "add two seats to the org"
    r"(?:add|invite|onboard)\w*\s+(?:\S+\s+){0,3}?(?:users?|members?|people|seats?|licen[cs]es?|accounts?"
    r"|editors?)\s+(?:\S+\s+){0,2}?(?:to|on|in|into)\s+(?:the\s+|our\s+)?(?:(?:paid|pro|premium|business"
    r"|enterprise)(?!\w)|team\s+(?:plan|tier|workspace|account)(?!\w))",
    # "I'd like the account upgraded to Pro", "the subscription should be renewed"
    r"(?:want|like|need|get|have|should|must|needs?\s+to|has\s+to)\s+(?:\S+\s+){0,4}?(?:plans?|tiers?"
    r"|subscriptions?|accounts?|workspaces?|orgs?|seats?|licen[cs]es?|domains?|instances?|droplets?|vps"
    r"|dynos?|credits?|memberships?|billing)\s+(?:\S+\s+){0,2}?(?:upgraded|renewed|extended|bumped"
    r"|topped\s+up|activated|(?:switched|moved|changed|converted)\s+(?:over\s+)?(?:to|onto)\s+(?:the\s+)?"
    + _TIER
    + r")(?!\w)",
    # "raise the monthly budget on AWS to 2k", "double the ad spend"
    r"(?:(?:rais|increas|bump|lift|doubl|tripl)\w*|up)\s+(?:\S+\s+){0,3}?(?:budgets?|ad\s+spend|spend(?:ing)?"
    r"|credit\s+limits?|billing\s+limits?)(?!\w)(?!\s+(?:question|issue|topic|item|discussion|point|concern"
    r"|meeting|review|docs?|document|spreadsheet|sheet|report|numbers|notes?|estimate)(?!\w))",
)


_PHRASES = Phrases(SPEND, _PATTERNS)


def find(low: str) -> list[tuple[str, str]]:
    """[(spending-money, phrase)] when ``low`` (vocabulary.fold of the text) asks to pay for a plan, a size,
    a renewal or a booking in everyday words; [] otherwise."""
    return _PHRASES.find(low)
