"""Which language a text is in, as far as the rules need to know: English or not."""

from __future__ import annotations

import re

from .words import FUNCTION_WORDS, split_sentences

__all__ = ["in_english"]

_WORD = re.compile(r"\w+")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|「[^」\n]*」|『[^』\n]*』")

# The commonest function words of other languages written in Latin letters (Spanish,
# Portuguese, French, Italian, German, Dutch, Swedish, Indonesian, Swahili, Turkish, Polish,
# Czech, Slovak, Hungarian, Finnish, Romanian, Croatian, Danish, Norwegian, Tagalog,
# Lithuanian, Latvian, Estonian, Malay, Afrikaans, Welsh):
# a language's own words, not an attack's, so the list does not race the attackers.
_OTHER_WORDS = (
    "el la los las del que por para una con como está este esta pero más muy sus os as um "
    "uma não são ao dos das pelo pela isso de et le les des du une est sont avec dans pour "
    "pas qui sur aux cette vous ce par au il gli della che per con non sono questo questa "
    "è der die das und ist nicht mit sich auf für ein eine dem den zu sie het een van en "
    "niet zijn deze dat door voor ze wordt och att är det som för på med inte till av "
    "stycke dan yang ini itu untuk dengan tidak ada dari bahwa oleh sudah na kwa ya wa ni "
    "hii kuwa hili hiki kwamba ve bir bu da için ile gibi się nie jest że na do jako tym "
    "oraz dla w z się że jak ale po co tak od przez są być jego jej który która które już "
    "może se je jako jsem jsou který pro při podle není také sa som sú ktorý pre pri podľa "
    "az és hogy nem egy meg van ez azt csak már mint még volt vagy ha ezt ja ei se että oli "
    "hän ovat mutta kun myös tai ole kuin vain jo niin mitä tämä și în la cu pe din este să "
    "care mai sau ce fost sunt această acest pentru u su kao ali što ili sa iz koji koja koje "
    "nije og er til som har ikke af jeg vil kan være fra også ang ng sa mga ay si ni kay "
    "hindi ito iyon kung siya ir kad yra su iš į bet kaip tai jo un ka ar uz par ka nav arī "
    "ei et see ka kui mis aga või za go ze telah sila bahawa ia akan dalam pada ke juga atau "
    "tetapi aan deur hierdie asseblief nie wat vir sal ook mae hwn hon wedi fod yn ei yr gyda "
    "ond ac"
)
# A word English shares (a, in, to) says nothing about the language.
_OTHER = frozenset(_OTHER_WORDS.split()) - FUNCTION_WORDS
# English's own function words: those of two letters (to, do, i, a) are other languages' too.
_ENGLISH = frozenset(w for w in FUNCTION_WORDS if len(w) > 2)


def in_english(text: str) -> bool:
    """``text`` reads as English: no sentence outside quotation marks is in another script
    (letters not ASCII, over 30 %), or in another language written in Latin letters (three of
    its function words or more, more than the English ones of three letters or more; or
    accented letters and almost no English function words, or none of three letters or more).
    A name with an accent, "Sagrada Família", keeps it English."""
    for sentence in split_sentences(_QUOTED.sub(" ", text)):
        letters = [c for c in sentence if c.isalpha()]
        if len(letters) < 4:
            continue
        if sum(not c.isascii() for c in letters) / len(letters) > 0.3:
            return False
        words = [w.casefold() for w in _WORD.findall(sentence)]
        other = len({w for w in words if w in _OTHER})
        if other >= 3 and other > sum(w in _ENGLISH for w in words):
            return False
        accented = sum(not c.isascii() for c in letters)
        ours = sum(w in FUNCTION_WORDS for w in words)
        if accented >= 3 and len(words) >= 6 and ours < 0.15 * len(words):
            return False
        if accented >= 2 and len(words) >= 4 and not any(w in _ENGLISH for w in words):
            return False
    return True
