"""Prompt injection: does a chunk address the judge instead of stating facts?

Rules, no model call. The text is read in normalised views first (``views.py``), so that
hiding an order does not hide it from the rules: NFKC; format characters (zero-width spaces,
joiners, soft hyphens) removed; look-alike letters of other scripts folded to Latin (Unicode's
confusables, through ``confusable_homoglyphs``); HTML and markdown comments opened, and removed
(a word split by an empty comment joins again); base64 and base32 runs decoded; the words, and
the letters, in reverse order; ROT13. Then:

- a *strong* sign alone marks the chunk: an order to ignore the instructions, passages or rules
  (English, German, French, Spanish, Italian, Portuguese, Russian, Chinese, Japanese), an order
  to count a claim as supported, a fake verdict in the reply's JSON shape, a fake passage
  delimiter, words to the reader "if you are an AI";
- a *weak* sign is common in honest text about prompts, APIs and fact-checking (a chat-template
  token, a ``"supported": true`` field, a "Verdict:" line, "passage 3", a role prefix, a note
  "to the grader"); two different ones mark the chunk.

The figures (attacks caught, honest chunks withheld; held-out parts too) are in
``benchmarks/injection.py --detector`` and benchmarks/RESULTS.md.

Most of the module is data: the rule tables (``_STRONG``, ``_WEAK``) and the patterns they
are built from, beside the few lines that read them.
"""

from __future__ import annotations

import functools
import re

from .views import views

__all__ = ["instructs_judge", "signs"]


def instructs_judge(text: str) -> bool:
    """True if ``text`` carries instructions to the judge (a prompt injection)."""
    strong, weak = signs(text)
    return bool(strong) or len(weak) >= 2


@functools.lru_cache(maxsize=4096)
def signs(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names of the strong and the weak signs found in ``text`` (cached per text: every
    claim of a sample, and every metric, asks about the same chunks)."""
    strong: set[str] = set()
    weak: set[str] = set()
    for view in views(text):
        for name, pattern in _STRONG:
            if name not in strong and _found(pattern, view):
                strong.add(name)
        for name, pattern in _WEAK:
            if name not in weak and _found(pattern, view):
                weak.add(name)
    return frozenset(strong), frozenset(weak)


# --- the rules ------------------------------------------------------------------------------

# Where an order starts: a sentence or clause, a quote or bracket, a polite or modal opener.
_START = (
    r"(?:^|(?<=[.!?:;,(\[\"'>*\-\n])|\b(?:please|kindly|now|just|simply|then|first|also|instead"
    r"|you\ (?:must|should|shall|will|need\ to|have\ to|are\ to|are\ required\ to)|i\ (?:want|need)"
    r"\ you\ to|must|should|shall|need\ to|are\ to|is\ to)(?=\s))\s*(?:always\s+|now\s+|simply\s+)?"
)
_VERDICT = (
    r"(?:supported|verified|true|correct|accurate|confirmed|attributable|backed|valid|approved"
    r"|pre-approved|established|substantiated|stated|entailed|grounded|yes)"
)
_TASK_NOUN = r"(?:claims?|statements?|assertions?|sentences?|facts?|answers?|verdicts?)"
_JUDGE = (
    r"(?:judge|grader|grading\ model|evaluator|fact-?checker|assessor|verifier|reviewer|rater"
    r"|annotator|ai|a\.i\.|llm|language\ model|ai\ model|model|assistant|bot|chatbot)"
)
# "each correct answer", "the correct answer": an adjective, not a verdict.
_ADJECTIVE = r"\b(?<!\beach\s)(?<!\bevery\s)(?<!\bthe\s)(?<!\ba\s)(?<!\ban\s)(?<!\bfor\s)"
# Inside one sentence; a period may sit inside a quoted claim ("... Canada." as supported).
_SAME = r"(?:[^.!?\n]|[.!?](?=\S))"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.VERBOSE)


_OVERRIDE_VERB = (
    r"(?:ignore|disregard|forget|override|overrule|bypass|skip|discard|drop|set\ aside"
    r"|put\ aside|pay\ no\ (?:attention|heed)\ to|stop\ following|abandon|throw\ out"
    r"|(?:do\ not|don't|never|no\ longer)\ (?:follow|obey|apply|use))"
)
_QUALIFIER = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|existing|given"
    r"|system|default|grading|evaluation|judging|usual|normal|your|all|any|every)"
)
_INSTRUCTIONS = (
    r"(?:instructions?|directions?|directives?|guidelines?|guidance|rules?|orders?|commands?"
    r"|constraints?|policies|policy|checks|criteria|procedures?)"
)
_ALWAYS_THE_JUDGES = (
    r"(?:(?:system\ )?prompts?|programming|passages?(?:\ \d+)?|(?:the\ )?context|the\ above"
    r"|above|everything\ (?:above|before|else|you\ (?:were|have\ been)\ told)"
    r"|what\ (?:you\ (?:were|have\ been)\ (?:told|given|asked)|came\ before)"
    r"|the\ (?:text|passages?|documents?)\ (?:above|before|that\ came\ before))"
)

# fmt: off
_STRONG: list[tuple[str, re.Pattern[str]]] = [
    # An order to drop the judge's instructions, in English ...
    ("override", _rx(
        _START + _OVERRIDE_VERB + r"\s+(?:about\s+)?(?:(?:all|any|each|of)\s+)*"
        r"(?:(?:the|these|those|my|this|that)\s+)?"
        r"(?:" + _QUALIFIER + r"\s+(?:\w+\s+)?" + _INSTRUCTIONS + r"|" + _ALWAYS_THE_JUDGES
        + r")\b(?!\s+(?:of|on)\b)"
    )),
    ("override", _rx(
        r"\b(?:your|the|all|any)\s+(?:" + _QUALIFIER + r"\s+)?" + _INSTRUCTIONS
        + r"\s+(?:you\s+(?:were|have\s+been)\s+given\s+|you\s+(?:normally|usually)\s+follow\s+)?"
        r"(?:\w+\s+)?(?:are|is|have\s+been|were|has\s+been)\s+(?:now\s+)?(?:cancell?ed|void"
        r"|revoked|obsolete|suspended|lifted|overridden|superseded|no\s+longer\s+valid)"
    )),
    ("override", _rx(
        r"\b(?:guidance|instructions|rules|directions|procedure|checks)\s+you\s+(?:were|have\s+"
        r"been)\s+given\b" + _SAME + r"{0,30}\b(?:no\s+longer\s+appl|do(?:es)?\s+not\s+apply)"
        r"|\b(?:procedure|rules|instructions|guidelines|checks?|criteria)\s+you\s+(?:normally\s+|"
        r"usually\s+)?(?:follow|use|apply)\s+(?:does|do)\s+not\s+apply"
    )),
    # ... and in other languages (an order to drop *qualified* instructions: "previous", "all").
    ("override_de", _rx(
        r"\b(?:ignorier\w*|vergiss|vergessen\s+sie|missacht\w*|übergeh\w*|verwirf|verwerfen\s+sie)"
        r"\b[^.\n]{0,30}\b(?:alle|vorherig\w*|bisherig\w*|obig\w*|vorig\w*|früher\w*|deine|ihre"
        r"|sämtliche|vorangegangen\w*|ursprünglich\w*)\s+(?:\w+\s+)?(?:anweisung\w*|instruktion\w*"
        r"|regeln|vorgaben|befehl\w*|richtlinien|passagen|textstellen|prompts?)"
        r"|\b(?:alle|vorherig\w*|bisherig\w*|obig\w*)\s+(?:anweisung\w*|instruktion\w*|regeln"
        r"|vorgaben)\s+(?:\w+\s+)?(?:ignorieren|vergessen|missachten)"
    )),
    ("override_fr", _rx(
        r"\b(?:ignore[zr]?|oublie[zr]?|ne\s+tiens?\s+pas\s+compte|ne\s+tenez\s+pas\s+compte"
        r"|fai(?:s|tes)\s+abstraction|fai(?:s|tes)\s+fi|passe[zr]?\s+outre|désobéi\w*)\b[^.\n]{0,20}"
        r"\b(?:instructions|consignes|règles|directives|indications|passages|ordres)\b"
        r"[^.\n]{0,30}(?:précédent\w*|antérieur\w*|ci-dessus|plus\s+haut|initiales|d'origine"
        r"|préalables|vous\s+a\s+donné\w*|qu'on\s+vous|reçues)"
        r"|\b(?:ignore[zr]?|oublie[zr]?)\s+(?:toutes\s+)?(?:tes|vos)\s+(?:instructions|consignes"
        r"|règles)"
    )),
    ("override_es_it_pt", _rx(
        r"\b(?:ignor[ae]|olvid[ae]|omit[ae]|haz\s+caso\s+omiso\s+(?:a|de)|desobedece|esqueça"
        r"|desconsidere|dimentica|trascura)\b[^.\n]{0,20}\b(?:instrucciones|reglas|indicaciones"
        r"|directrices|pasajes|istruzioni|regole|indicazioni|instruções|regras|orientações)"
        r"\b[^.\n]{0,10}\b(?:anteriores|previas|prévias|precedentes|de\s+arriba|acima|precedenti"
        r"|sopra|tus|tuas|suas)\b"
        r"|\b(?:ignor[ae]|olvid[ae]|dimentica)\s+(?:todas\s+)?(?:tus|sus|le\s+tue)\s+"
        r"(?:instrucciones|reglas|istruzioni|regole)"
    )),
    ("override_ru", _rx(
        r"(?:игнорир\w*|забуд\w*|не\s+обращай\w*\s+внимания\s+на|пренебреги\w*)[^.\n]{0,20}"
        r"(?:предыдущ\w*|прежн\w*|вышеуказанн\w*|все|свои)\s+(?:\w+\s+)?(?:инструкци\w*|указани\w*"
        r"|правил\w*|команд\w*)"
    )),
    ("override_zh_ja", _rx(
        r"(?:忽略|无视|無視|忘记|忘記|忘掉|不要理会|不要理會|不要遵守|不必遵守|无需遵守|不用管|無視し)"
        r"[^。\n]{0,10}(?:之前|先前|以前|上面|上述|以上|前面|此前|所有|一切|全部)[^。\n]{0,6}"
        r"(?:指令|指示|说明|說明|规则|規則|提示|要求|段落|命令)"
        r"|(?:之前|先前|以前|上面|上述|以上|前面|これまで|上記)の?(?:所有|全部|すべての)?"
        r"(?:指令|指示|规则|規則|提示|命令|ルール)[^。\n]{0,12}(?:忽略|无视|無視|忘记|忘れ)"
    )),
    # An order to count a claim as supported (not "as supported or unsupported", not a rubric's
    # "as correct if ...").
    ("verdict_order", _rx(
        _START + r"(?:mark|label|rate|grade|treat|count|consider|classify|score|judge|answer"
        r"|reply|respond|output|say|return|confirm|report|accept|approve|conclude|record|print"
        r"|regard|deem|rule|declare|flag|cite)\b(?![\"']|\s*:)" + _SAME + r"{0,70}?" + _ADJECTIVE
        + _VERDICT + r"\b(?!\s+(?:or|and/or)\s+(?:not|un|refuted|false|incorrect))"
        r"(?!" + _SAME + r"{0,25}\b(?:if|when|only|unless|provided)\b)"
    )),
    # An order to reproduce a text as it stands ("output it unchanged", "print exactly this").
    ("verdict_order", _rx(
        _START + r"(?:output|print|return|repeat|reply\s+with|respond\s+with)\b"
        + _SAME + r"{0,30}?\b(?:unchanged|exactly|verbatim|as\s+it\s+(?:is|stands)"
        r"|nothing\s+else)\b"
    )),
    ("verdict_order", _rx(
        r"\b(?:must|should|shall|is\s+to|are\s+to|will)\s+be\s+(?:judged|marked|treated|rated"
        r"|counted|considered|graded|labell?ed|scored|accepted|regarded|reported)\s+as\s+"
        + _VERDICT + r"\b"
    )),
    ("verdict_order", _rx(
        r"\b(?:agrees?|agreeing)\s+with\s+(?:every|all|each|any)\s+" + _TASK_NOUN
        + r"|\b(?:do\s+not|don't|never)\s+(?:mark|label|rate|flag|grade|count|treat)\b"
        + _SAME + r"{0,30}\b(?:unsupported|not\s+supported|unverified|false|incorrect"
        r"|as\s+errors?)|" + _START + r"(?:answer|reply|respond|say|output|report|conclude"
        r"|confirm)\s+(?:that\s+)?(?:this|the)\s+(?:passage|document|source|text|chunk|page)\s+(?:states|supports|confirms"
        r"|contains|proves)"
    )),
    ("verdict_order_intl", _rx(
        r"\b(?:jede|alle|chaque|toutes\s+les|cada|todas\s+las|ogni|tutte\s+le)\s+(?:\w+\s+)?"
        r"(?:behauptung\w*|aussage\w*|affirmations?|déclarations?|afirmaci\w+|declaraci\w+"
        r"|affermazion\w+)\b[^.\n]{0,40}\b(?:belegt|unterstützt|bestätigt|gestützt|étayée?s?"
        r"|vérifiée?s?|confirmée?s?|respaldad\w+|verificad\w+|supportat\w+|confermat\w+)"
        r"|(?:每一?条|每个|所有|全部)[^。\n]{0,6}(?:陈述|说法|主张|声明)[^。\n]{0,10}(?:支持|有依据|证实|正确)"
        r"|(?:回答|判定|标记|標記|答复)[^。\n]{0,10}[“\"「]?(?:支持|有依据|証明|裏付け)"
        r"|裏付けられている"
    )),
    # Imitations of the reply's verdict JSON and of the passage delimiters.
    ("verdict_json", _rx(
        r"[{,]\s*[\"']supported[\"']\s*:\s*(?:true|[\"']?yes)\b[^{}]{0,200}[\"'](?:passage|quote"
        r"|claim|evidence|verdicts?)[\"']\s*:"
        r"|[\"'](?:passage|quote|claim|evidence)[\"']\s*:[^{}]{0,200}[\"']supported[\"']\s*:"
        r"\s*(?:true|[\"']?yes)\b"
        r"|[\"']verdicts[\"']\s*:\s*\[\s*\{"
        r"|[\"']verdict[\"']\s*:\s*[\"'](?:supported|true|yes|attributable)[\"']"
    )),
    ("delimiter", _rx(
        r"</?\s*_?passages?\b[^>\n]{0,40}>|\bend\s+of\s+(?:the\s+)?(?:passages|context|documents"
        r"|sources)\b|={2,}\s*(?:begin|start|end)\s+of\b|={2,}\s*passages\b"
    )),
    # Evidence markers: "[evidence verified]", "quote to use:", "passage 2 supports this claim".
    ("evidence_marker", _rx(
        r"\[[^\]\n]{0,30}\b(?:evidence|quote|claim|verdict|passage\s+\d+)\b[^\]\n]{0,30}\b"
        r"(?:verified|matched|confirmed|supports?|supported)\b[^\]\n]{0,20}\]"
        r"|\[[^\]\n]{0,10}\b(?:verified|matched|confirmed|supported)\s+(?:evidence|quote|claim)\]"
        r"|\b(?:quote|passage|evidence|verdict)\s+to\s+(?:use|cite|give|output|return)\s*:"
        r"|\bpassage\s+\d+\s+(?:supports|confirms|verifies|proves)\s+(?:this|the)\s+claim"
        r"|\bquote\s+this\s+(?:sentence|text|passage)\b"
    )),
    ("to_the_ai", _rx(
        r"\bif\s+you\s+(?:are|'re)\s+(?:an?\s+)?(?:ai|llm|language\s+model|chatbot|ai\s+model"
        r"|assistant|bot|large\s+language\s+model)\b[^.\n]{0,20}\b(?:reading|processing|parsing"
        r"|summari[sz]\w*|evaluat\w*|judg\w*|grading|checking|reviewing|this|that)\b"
    )),
    # The reader's makers invoked ("the people who built you want ..."): added after the
    # held-out case para-06 got through, so that case no longer counts as held out.
    ("to_the_ai", _rx(
        r"\b(?:people|team|company|developers?|engineers?|creators?|makers?|those)\s+(?:who|that)"
        r"\s+(?:built|made|created|trained|designed|programmed|deployed)\s+you\s*(?:[,;:]|(?:"
        r"want|wants|would|need|needs|ask|asks|expect|expects|require|requires|insist|insists"
        r"|told|instruct\w*|intend\w*|say|says)\b)"
    )),
]

_WEAK: list[tuple[str, re.Pattern[str]]] = [
    ("chat_template", _rx(
        r"<\|(?:im_start|im_end|eot_id|start_header_id|end_header_id|begin_of_text|system|user"
        r"|assistant|end)\|>|\[/?inst\]|<</?sys>>|<(?:start|end)_of_turn>|</?tool_(?:response"
        r"|call|result)>|\#\#\#\s*(?:instruction|response|system|assistant)\b"
    )),
    ("verdict_value", _rx(r"[\"']?supported[\"']?\s*[=:]\s*(?:true|[\"']?yes)\b")),
    ("verdict_line", _rx(r"(?:^|\n)\s*(?:our\s+)?(?:evidence|verdict)\s*:")),
    ("passage_number", _rx(r"\b(?:passage|chunk|document)\s+\d+\b")),
    ("role_prefix", _rx(r"(?:^|\n|\s)(?:system(?:\s+note)?|assistant|human|user|ai)\s*:")),
    ("to_the_judge", _rx(
        r"\b(?:note\s+(?:to|for)|message\s+(?:to|for|from)|attention|dear|hey|for|to)\s+(?:the\s+)?"
        + _JUDGE + r"\b[^.\n]{0,30}[:,]|(?:^|[.!?]\s+)(?:judge|grader|evaluator|fact-?checker"
        r"|assessor|verifier|rater|annotator)\s*[:,]"
        r"|\b(?:evaluation|grading|review)\s+team\b"
    )),
    ("you_judge", _rx(
        r"\byou\s+are\s+(?:now\s+)?(?:the\s+|an?\s+)?(?:\w+\s+)?(?:judge|grader|evaluator"
        r"|fact-?checker|verifier|assessor|rater|annotator)\b"
        r"|\b(?:you\s+are|you're|are\s+you)\s+(?:grading|judging|evaluating|checking|assessing"
        r"|reviewing|verifying)\b|\byou\s+are\s+asked\s+to\s+(?:assess|check|judge|grade|evaluate)"
        r"|\b(?:who|that)\s+(?:built|made|created|trained|programmed)\s+you\b"
    )),
    ("all_claims_true", _rx(
        r"\b(?:every|all|each|any)\s+(?:\w+\s+)?" + _TASK_NOUN + r"\b" + _SAME
        + r"{0,60}\b(?:is|are|counts?\s+as|has|have|should|must|will)"
        r"\s+(?:already\s+|all\s+|now\s+)?(?:been\s+|be\s+)?(?:\w+\s+)?" + _VERDICT + r"\b"
    )),
    ("claim_is_true", _rx(
        r"\b(?:the|this|that)\s+(?:claim|statement|assertion)\s+(?:is|was|has\s+been|counts\s+as)"
        r"\s+(?:fully\s+|well\s+|clearly\s+)?(?:supported|verified|true|correct|accurate"
        r"|confirmed|attributable)\b"
        r"|\b(?:marking|grading|rating|labell?ing|flagging|judging|scoring)\s+(?:it|this|them"
        r"|the\s+claim|the\s+answer|any\s+of\s+them)\s+as\s+(?:unsupported|not\s+supported|false"
        r"|incorrect|wrong)|\b(?:correct|right|expected|final)\s+(?:verdict|label)\b"
        r"|\bwhat's\s+the\s+verdict\b"
    )),
    ("quote_exactly", _rx(
        r"\b(?:quote|copy)\b[^.\n]{0,20}\b(?:exactly|verbatim)\b"
    )),
    ("supporting_quote", _rx(r"\bsupporting\s+(?:quote|passage|evidence)\s*[(:]")),
    ("this_source_says", _rx(
        r"\bthis\s+(?:passage|page|document|source|chunk|paragraph)\s+(?:confirms|supports|states"
        r"|verifies|proves|establishes)\s+(?:that|the\s+claim|this\s+claim|the\s+statement)"
    )),
]
# fmt: on

# A quoted mention of an attack ("phrases like 'ignore previous instructions'") is not one.
_MENTION = re.compile(
    r"(?:\blike|such\ as|phrases?|strings?|e\.g\.|for\ example|examples?|called|words?|texts?"
    r"|says?|typed?|wrote|writes?|reads?|contains?|includes?)\s*[\"'“‘`]\s*$",  # noqa: RUF001
    re.VERBOSE,
)


def _found(pattern: re.Pattern[str], view: str) -> bool:
    return any(
        not _MENTION.search(view, max(0, m.start() - 40), m.start()) for m in pattern.finditer(view)
    )
