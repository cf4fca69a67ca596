"""The language of a text from its script, its function words and its letters: cheap, no model.

It names 16 languages (see `WORDS`); extractors' summaries use it as it is, and
`agents.language.detect` asks it when py3langid is unsure about a short prompt.
"""

from __future__ import annotations

import re
import unicodedata

# Function words plus the verbs and nouns people use when asking for work on documents, so a
# one-line prompt ("Fasse das Dokument zusammen") carries enough evidence.
WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        """the a an and or of to in on for with from by at is are was were be been this that
        these those it its i you we they he she me my your our their what which who how why
        when where please can could would should will do does did not no yes all any some
        summarize summarise summary create make write give show list find extract translate
        explain compare document documents report file files table tables text page pages
        about into than then there here have has had as but if so also each per only hello hi
        thanks thank much many""".split()
    ),
    "de": frozenset(
        """der die das den dem des ein eine einen einem einer eines und oder nicht ist sind war
        waren wird werden wurde ich du er sie es wir ihr mich mir dich dir uns euch mein dein
        sein unser bitte kann können könnten soll sollte was wer wie warum wann wo welche
        welcher welches mit von zu zum zur im in auf für aus bei nach über unter auch noch nur
        schon sehr dass daß fasse fass fassen zusammen zusammenfassung erstelle erstellen
        schreibe schreib gib zeige finde extrahiere übersetze erkläre vergleiche dokument
        dokumente dokuments bericht berichte datei dateien tabelle tabellen seite seiten
        liste alle diese dieser dieses jede jeder hat haben hatte man einfach kannst könntest
        hallo danke wieviel viele hoch nenne""".split()
    ),
    "fr": frozenset(
        """le la les un une des du de au aux et ou ne pas est sont était été être je tu il elle
        nous vous ils elles me moi mon ma mes ton ta tes son sa ses notre votre leur leurs ce
        cet cette ces qui que quoi quel quelle quels quelles comment pourquoi quand où dans sur
        pour par avec sans plus très aussi mais donc s'il svp stp veuillez peux pouvez résume
        résumez résumer résumé crée créez créer écris écrivez donne donnez montre montrez
        trouve trouvez extrais extrayez traduis traduisez explique expliquez compare comparez
        document documents resume resumer fichier fichiers tableau tableaux rapport page pages
        liste tous toutes chaque c'est
        qu'il d'un d'une l'on combien bonjour merci sont peux-tu pouvez-vous""".split()
    ),
    "es": frozenset(
        """el la los las un una unos unas y o no es son era fue ser estar está están yo tú él
        ella nosotros ellos mi mis tu tus su sus que qué quién cómo por para con sin del al en
        pero muy también este esta estos estas ese esa hay resume resumir resumen crea escribe
        dame muestra encuentra extrae traduce explica documento documentos informe archivo
        tabla tablas página lista todos cada favor""".split()
    ),
    "it": frozenset(
        """il lo la i gli le un uno una e o non è sono era ero essere io tu lui lei noi voi loro
        mio mia miei tuo suo nostro che chi come perché quando dove di da in con su per tra fra
        del della dei delle al alla nel nella ma molto anche questo questa questi riassumi
        riassunto crea scrivi dammi mostra trova estrai traduci spiega documento documenti
        rapporto file tabella tabelle pagina elenco tutti ogni favore""".split()
    ),
    "nl": frozenset(
        """de het een en of niet is zijn was waren wordt worden ik jij je hij zij ze wij we
        jullie mijn jouw zijn haar ons onze wat wie hoe waarom wanneer waar welke met van voor
        naar op in uit bij over ook nog maar heel dit dat deze die er vat samen samenvatting
        maak schrijf geef toon vind vertaal leg uit document documenten verslag rapport
        bestand bestanden tabel tabellen pagina lijst alle elke alstublieft graag""".split()
    ),
    "pt": frozenset(
        """o a os as um uma uns umas e ou não é são era foi ser estar está estão eu tu ele ela
        nós eles elas meu minha seu sua nosso que quem como porque quando onde de do da dos das
        em no na nos nas com sem por para mas muito também este esta isto esse essa resuma
        resumir resumo crie escreva dê mostre encontre extraia traduza explique documento
        documentos relatório arquivo ficheiro tabela tabelas página lista todos cada favor você""".split()
    ),
}

# Letters that (nearly) only one of the Latin-script languages here uses.
_LETTERS: dict[str, str] = {
    "de": "äöüß",
    "fr": "èêëçœàâîïûù",
    "es": "ñ¿¡",
    "pt": "ãõ",
    "it": "ìò",
}

_SCRIPTS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("ko", ((0xAC00, 0xD7AF), (0x1100, 0x11FF), (0x3130, 0x318F))),
    ("ja", ((0x3040, 0x30FF), (0x31F0, 0x31FF))),
    ("zh", ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0xF900, 0xFAFF))),
    ("ar", ((0x0600, 0x06FF), (0x0750, 0x077F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))),
    ("ru", ((0x0400, 0x04FF),)),
    ("el", ((0x0370, 0x03FF),)),
    ("he", ((0x0590, 0x05FF),)),
    ("th", ((0x0E00, 0x0E7F),)),
    ("hi", ((0x0900, 0x097F),)),
)

WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def _script(ch: str) -> str | None:
    code = ord(ch)
    for lang, ranges in _SCRIPTS:
        for lo, hi in ranges:
            if lo <= code <= hi:
                return lang
    return None


def by_script(text: str) -> str | None:
    """A language decided by non-Latin script, when such letters dominate the text."""
    counts: dict[str, int] = {}
    latin = 0
    for ch in text:
        lang = _script(ch)
        if lang:
            counts[lang] = counts.get(lang, 0) + 1
        elif ch.isalpha():
            latin += 1
    if not counts:
        return None
    # Japanese mixes kana with Han characters; a little kana is decisive.
    if counts.get("ja", 0) and counts["ja"] * 10 >= counts.get("zh", 0):
        counts["ja"] += counts.pop("zh", 0)
    lang, n = max(counts.items(), key=lambda item: item[1])
    # CJK characters carry a word each, so they weigh like a short Latin word.
    weight = n * (3 if lang in ("zh", "ja", "ko") else 1)
    return lang if weight >= latin else None


def by_words(text: str, default: str = "en") -> str:
    """The language whose stopwords, letters or script the text shows most, or `default`."""
    sample = text[:20_000]
    scripted = by_script(sample)
    if scripted:
        return scripted
    lowered = unicodedata.normalize("NFC", sample).casefold().replace("’", "'")
    words = WORD.findall(lowered)
    if not words:
        return default
    scores = dict.fromkeys(WORDS, 0.0)
    for word in words:
        for lang, vocab in WORDS.items():
            if word in vocab:
                scores[lang] += 1.0
        # Elided articles ("l'esprit", "d'un", "qu'il") are French; "it's" is English.
        if "'" in word:
            head = word.split("'", 1)[0]
            if head in ("l", "d", "qu", "j", "n", "s", "c", "m", "t"):
                scores["fr"] += 1.0
            elif head in ("it", "don", "can", "i", "that", "there", "what"):
                scores["en"] += 1.0
    for lang, letters in _LETTERS.items():
        hits = sum(lowered.count(letter) for letter in letters)
        # Letters are strong on short prompts but must not swamp stopwords on long texts.
        scores[lang] += min(hits, 2 + len(words) // 20) * 0.75
    if "é" in lowered:
        # é is shared by French, Spanish, Portuguese and Italian; it breaks ties between them
        # and English/German.
        for lang in ("fr", "es", "pt", "it"):
            scores[lang] += 0.5 if lang == "fr" else 0.25
    best = max(scores.values())
    if best <= 0:
        return default
    leaders = [lang for lang, score in scores.items() if score == best]
    return default if default in leaders else leaders[0]
