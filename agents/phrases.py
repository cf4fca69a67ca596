"""Fixed sentences in English, German and French, for messages written without a model."""

from __future__ import annotations

# Every key has all three languages; `say` falls back to English for any other language. A
# phrase counting things is a pair (one, several), chosen by its `n`.
PHRASES: dict[str, dict[str, str | tuple[str, str]]] = {
    "offline_plan": {
        "en": "I am working offline, without a language model: I can quote, extract and "
        "compile from your documents, but I cannot write new prose or translate.",
        "de": "Ich arbeite offline, ohne Sprachmodell: Ich kann aus Ihren Dokumenten zitieren, "
        "extrahieren und zusammenstellen, aber keinen neuen Text verfassen oder übersetzen.",
        "fr": "Je travaille hors ligne, sans modèle de langage : je peux citer, extraire et "
        "compiler à partir de vos documents, mais pas rédiger ni traduire.",
    },
    "plan_steps": {
        "en": ("I have planned {n} step: {steps}.", "I have planned {n} steps: {steps}."),
        "de": ("Ich habe {n} Schritt geplant: {steps}.", "Ich habe {n} Schritte geplant: {steps}."),
        "fr": ("J'ai prévu {n} étape : {steps}.", "J'ai prévu {n} étapes : {steps}."),
    },
    "plan_nothing": {
        "en": "Without a language model I cannot answer this from my own knowledge, but here is what I can do "
        "with your documents (PDF, Word, Excel, CSV, PowerPoint, HTML, text, scans): answer questions about them, "
        "quoting and citing the passages; find the highest, the lowest or the total of a table's column; "
        "summarise them; extract their tables as Excel or CSV; and compile a report as Word or Markdown. With a "
        "language model configured I also translate and write in my own words. Upload a document and ask, for "
        "example: \u201cWhat does the report say about the costs?\u201d",
        "de": "Ohne Sprachmodell kann ich das nicht aus eigenem Wissen beantworten, aber das kann ich mit Ihren "
        "Dokumenten tun (PDF, Word, Excel, CSV, PowerPoint, HTML, Text, Scans): Fragen dazu beantworten und die "
        "Stellen zitieren und belegen; den höchsten, den niedrigsten Wert oder die Summe einer Tabellenspalte "
        "finden; sie zusammenfassen; ihre Tabellen als Excel oder CSV extrahieren; und einen Bericht als Word oder "
        "Markdown zusammenstellen. Mit einem konfigurierten Sprachmodell übersetze ich auch und schreibe in eigenen "
        "Worten. Laden Sie ein Dokument hoch und fragen Sie zum Beispiel, was der Bericht über die Kosten sagt.",
        "fr": "Sans modèle de langage, je ne peux pas répondre à cela de moi-même, mais voici ce que je peux faire "
        "avec vos documents (PDF, Word, Excel, CSV, PowerPoint, HTML, texte, scans) : répondre à vos questions en "
        "citant les passages ; trouver la valeur la plus élevée, la plus basse ou le total d'une colonne de "
        "tableau ; les résumer ; extraire leurs tableaux en Excel ou CSV ; et compiler un rapport en Word ou "
        "Markdown. Avec un modèle de langage configuré, je traduis aussi et rédige avec mes propres mots. "
        "Joignez un document et demandez par exemple : \u00ab Que dit le rapport sur les coûts ? \u00bb",
    },
    "plan_unclear": {
        "en": "I could not tell what to do with {docs} from this request. Ask a question about them, or ask "
        "for a summary, their tables or a report.",
        "de": "Aus dieser Anfrage geht nicht hervor, was ich mit {docs} tun soll. Stellen Sie eine Frage dazu "
        "oder bitten Sie um eine Zusammenfassung, die Tabellen oder einen Bericht.",
        "fr": "Je ne vois pas, d'après cette demande, ce que je dois faire de {docs}. Posez une question à "
        "leur sujet, ou demandez un résumé, leurs tableaux ou un rapport.",
    },
    "work_plan": {"en": "Work plan", "de": "Arbeitsplan", "fr": "Plan de travail"},
    "documents_to_deliver": {
        "en": "Documents to deliver",
        "de": "Zu liefernde Dokumente",
        "fr": "Documents à livrer",
    },
    "inputs": {"en": "inputs", "de": "Eingaben", "fr": "entrées"},
    "outputs": {"en": "outputs", "de": "Ergebnisse", "fr": "sorties"},
    "after": {"en": "after", "de": "nach", "fr": "après"},
    "step_summarize": {
        "en": "summarise {docs}",
        "de": "{docs} zusammenfassen",
        "fr": "résumer {docs}",
    },
    "step_answer": {
        "en": "answer your question from {docs}",
        "de": "Ihre Frage anhand von {docs} beantworten",
        "fr": "répondre à votre question à partir de {docs}",
    },
    "step_extract": {
        "en": "extract the tables of {docs} as {formats}",
        "de": "die Tabellen aus {docs} als {formats} extrahieren",
        "fr": "extraire les tableaux de {docs} en {formats}",
    },
    "step_translate": {
        "en": "translate {docs} into {target}",
        "de": "{docs} ins {target} übersetzen",
        "fr": "traduire {docs} en {target}",
    },
    "step_write": {
        "en": "write the document {name}",
        "de": "das Dokument {name} verfassen",
        "fr": "rédiger le document {name}",
    },
    "step_agent": {
        "en": "run the agent {agent}",
        "de": "den Agenten {agent} ausführen",
        "fr": "exécuter l'agent {agent}",
    },
    "summary_of": {
        "en": "Summary of {doc}",
        "de": "Zusammenfassung von {doc}",
        "fr": "Résumé de {doc}",
    },
    "extractive_note": {
        "en": "Offline extractive summary: the document's most informative sentences, quoted "
        "verbatim (no language model was used).",
        "de": "Offline-Auszug: die aussagekräftigsten Sätze des Dokuments, wörtlich zitiert "
        "(ohne Sprachmodell).",
        "fr": "Résumé extractif hors ligne : les phrases les plus informatives du document, "
        "citées telles quelles (sans modèle de langage).",
    },
    "extract_language": {
        "en": "They are in {name}, the document's language: without a language model I do not translate them.",
        "de": "Sie sind auf {name}, in der Sprache des Dokuments: Ohne Sprachmodell übersetze ich sie nicht.",
        "fr": "Elles sont en {name}, la langue du document : sans modèle de langage, je ne les traduis pas.",
    },
    "answer_note": {
        "en": "Offline answer: without a language model I quote the passages of your documents "
        "that best match the question.",
        "de": "Offline-Antwort: Ohne Sprachmodell zitiere ich die Passagen Ihrer Dokumente, "
        "die am besten zur Frage passen.",
        "fr": "Réponse hors ligne : sans modèle de langage, je cite les passages de vos "
        "documents qui correspondent le mieux à la question.",
    },
    "passages_from": {
        "en": "From {doc}:",
        "de": "Aus {doc}:",
        "fr": "Extrait de {doc} :",
    },
    "not_mentioned": {
        "en": "Not found: {words} appears nowhere in {docs}, so the documents do not answer this. "
              "The closest passages:",
        "de": "Nicht gefunden: {words} kommt in {docs} nirgends vor, die Dokumente beantworten das also nicht. "
              "Die nächstliegenden Passagen:",
        "fr": "Introuvable : {words} n'apparaît nulle part dans {docs}, les documents n'y répondent donc pas. "
              "Les passages les plus proches :",
    },
    "compiled_max": {
        "en": "Highest {column}: {label}, {value} {marks}",
        "de": "Höchster Wert von «{column}»: {label}, {value} {marks}",
        "fr": "Valeur la plus élevée de « {column} » : {label}, {value} {marks}",
    },
    "compiled_min": {
        "en": "Lowest {column}: {label}, {value} {marks}",
        "de": "Niedrigster Wert von «{column}»: {label}, {value} {marks}",
        "fr": "Valeur la plus basse de « {column} » : {label}, {value} {marks}",
    },
    "compiled_sum": {
        "en": ("Total {column} over {n} row: {value} {marks}", "Total {column} over {n} rows: {value} {marks}"),
        "de": ("Summe von «{column}» über {n} Zeile: {value} {marks}",
               "Summe von «{column}» über {n} Zeilen: {value} {marks}"),
        "fr": ("Total de « {column} » sur {n} ligne : {value} {marks}",
               "Total de « {column} » sur {n} lignes : {value} {marks}"),
    },
    "compiled_unnamed": {
        "en": "The question names no column of the table; its one numeric column is «{column}»:",
        "de": "Die Frage nennt keine Spalte der Tabelle; ihre einzige Zahlenspalte ist «{column}»:",
        "fr": "La question ne nomme aucune colonne du tableau ; sa seule colonne de nombres est « {column} » :",
    },
    "compiled_which": {
        "en": "The question names none of the numeric columns of {source} ({columns}), so nothing was compared: "
              "name the column to compare",
        "de": "Die Frage nennt keine der Zahlenspalten von {source} ({columns}), daher wurde nichts verglichen: "
              "Nennen Sie die zu vergleichende Spalte",
        "fr": "La question ne nomme aucune des colonnes de nombres de {source} ({columns}), rien n'a donc été "
              "comparé : nommez la colonne à comparer",
    },
    "after_row": {
        "en": "After «{named}» came: {next} {marks}",
        "de": "Auf «{named}» folgte: {next} {marks}",
        "fr": "Après « {named} » est venu : {next} {marks}",
    },
    "after_last_row": {
        "en": "«{named}» ({date}) is the last entry of the table: nothing after it is in the documents {marks}",
        "de": "«{named}» ({date}) ist der letzte Eintrag der Tabelle: was danach kam, steht nicht in den Dokumenten {marks}",
        "fr": "« {named} » ({date}) est la dernière entrée du tableau : la suite ne figure pas dans les documents {marks}",
    },
    "compiled_group": {
        "en": "(the sum of its {n} rows)",
        "de": "(die Summe seiner {n} Zeilen)",
        "fr": "(la somme de ses {n} lignes)",
    },
    "searched_absent": {
        "en": "Not found in {docs}: {words}.",
        "de": "In {docs} nicht gefunden: {words}.",
        "fr": "Introuvable dans {docs} : {words}.",
    },
    "no_fact": {
        "en": "Not found: {docs} give no {kind} for this (no passage holds one). The closest passages:",
        "de": "Nicht gefunden: {docs} enthalten dazu keine Angabe (gesucht: {kind}). Die nächstliegenden Passagen:",
        "fr": "Introuvable : {docs} ne donnent pas cette information (cherché : {kind}). "
              "Les passages les plus proches :",
    },
    "unsupported_figures": {
        "en": "To check: {figures} appears in none of the passages above.",
        "de": "Zu prüfen: {figures} steht in keiner der Passagen oben.",
        "fr": "À vérifier : {figures} n'apparaît dans aucun des passages ci-dessus.",
    },
    "kind_price": {"en": "price", "de": "Preis", "fr": "prix"},
    "kind_date": {"en": "date", "de": "Datum", "fr": "date"},
    "kind_number": {"en": "figure", "de": "Zahl", "fr": "chiffre"},
    "kind_author": {"en": "author", "de": "Autor", "fr": "auteur"},
    "no_passage": {
        "en": "No passage of {doc} matches the question.",
        "de": "Keine Passage in {doc} passt zur Frage.",
        "fr": "Aucun passage de {doc} ne correspond à la question.",
    },
    "no_documents": {
        "en": "No documents were given to work on.",
        "de": "Es wurden keine Dokumente zur Bearbeitung übergeben.",
        "fr": "Aucun document n'a été fourni.",
    },
    "no_text": {
        "en": "{doc} contains no text that could be read.",
        "de": "{doc} enthält keinen lesbaren Text.",
        "fr": "{doc} ne contient aucun texte lisible.",
    },
    "cannot_translate": {
        "en": "Offline, without a language model, I cannot translate {doc} into {target}, so I "
        "deliver no translation; configure a model (OPENAI_BASE_URL) to get one.",
        "de": "Offline, ohne Sprachmodell, kann ich {doc} nicht ins {target} übersetzen und liefere "
        "daher keine Übersetzung; konfigurieren Sie ein Modell (OPENAI_BASE_URL), um eine zu erhalten.",
        "fr": "Hors ligne, sans modèle de langage, je ne peux pas traduire {doc} en {target} : je ne "
        "livre donc aucune traduction ; configurez un modèle (OPENAI_BASE_URL) pour en obtenir une.",
    },
    "untranslated": {"en": "[untranslated]", "de": "[nicht übersetzt]", "fr": "[non traduit]"},
    "translation_of": {
        "en": "Translation of {doc} into {target}",
        "de": "Übersetzung von {doc} ins {target}",
        "fr": "Traduction de {doc} en {target}",
    },
    "csv_sheet": {"en": "Sheet", "de": "Blatt", "fr": "Feuille"},  # the column a stacked CSV names each row's source in
    "csv_table": {"en": "Table", "de": "Tabelle", "fr": "Tableau"},
    "tables_found": {
        "en": ("{n} table extracted from {docs}.", "{n} tables extracted from {docs}."),
        "de": ("{n} Tabelle aus {docs} extrahiert.", "{n} Tabellen aus {docs} extrahiert."),
        "fr": ("{n} tableau extrait de {docs}.", "{n} tableaux extraits de {docs}."),
    },
    "table_sheet": {
        "en": "sheet “{sheet}”: {where}, {rows} rows × {cols} columns",
        "de": "Blatt „{sheet}“: {where}, {rows} Zeilen × {cols} Spalten",
        "fr": "feuille « {sheet} » : {where}, {rows} lignes × {cols} colonnes",
    },
    "preview_rows": {
        "en": "(the first {shown} of {rows} rows shown)",
        "de": "(die ersten {shown} von {rows} Zeilen)",
        "fr": "(les {shown} premières lignes sur {rows})",
    },
    "table_from": {
        "en": "{source} of {doc}",
        "de": "{source} aus {doc}",
        "fr": "{source} de {doc}",
    },
    "sheets": {
        "en": ("{n} sheet", "{n} sheets"),
        "de": ("{n} Blatt", "{n} Blätter"),
        "fr": ("{n} feuille", "{n} feuilles"),
    },
    "english_only": {
        "en": "The offline model answers in English, German or French; here is the answer in English.",
        "de": "The offline model answers in English, German or French; here is the answer in English.",
        "fr": "The offline model answers in English, German or French; here is the answer in English.",
    },
    "no_tables": {
        "en": "No tables or figures were found in {docs}.",
        "de": "In {docs} wurden keine Tabellen oder Zahlen gefunden.",
        "fr": "Aucun tableau ni chiffre n'a été trouvé dans {docs}.",
    },
    "files_delivered": {
        "en": "Files: {files}",
        "de": "Dateien: {files}",
        "fr": "Fichiers : {files}",
    },
    "full_text_in": {
        "en": "The full text is in {files}.",
        "de": "Der vollständige Text steht in {files}.",
        "fr": "Le texte complet se trouve dans {files}.",
    },
    "writer_note": {
        "en": "Draft compiled offline, without a language model, from the material below.",
        "de": "Entwurf, offline ohne Sprachmodell aus dem folgenden Material zusammengestellt.",
        "fr": "Brouillon compilé hors ligne, sans modèle de langage, à partir des éléments "
        "ci-dessous.",
    },
    "request": {"en": "Request", "de": "Auftrag", "fr": "Demande"},
    "sources": {"en": "Sources", "de": "Quellen", "fr": "Sources"},
    "results": {"en": "Results of earlier steps", "de": "Ergebnisse früherer Schritte",
                "fr": "Résultats des étapes précédentes"},
    "document_written": {
        "en": "I wrote {files}.",
        "de": "Ich habe {files} verfasst.",
        "fr": "J'ai rédigé {files}.",
    },
    "final_offline": {
        "en": "This round ran offline, without a language model: the results are extracts "
        "from your documents, not generated text.",
        "de": "Diese Runde lief offline, ohne Sprachmodell: Die Ergebnisse sind Auszüge aus "
        "Ihren Dokumenten, kein generierter Text.",
        "fr": "Ce tour s'est déroulé hors ligne, sans modèle de langage : les résultats sont "
        "des extraits de vos documents, pas du texte généré.",
    },
    "final_stand_in": {
        "en": "The language model could not write this review, so it was compiled from the plan and the "
        "results.",
        "de": "Das Sprachmodell konnte diese Übersicht nicht schreiben; sie wurde aus dem Plan und den "
        "Ergebnissen zusammengestellt.",
        "fr": "Le modèle de langage n'a pas pu rédiger ce bilan ; il a été établi à partir du plan et des "
        "résultats.",
    },
    "final_all_done": {
        "en": ("The planned step is done.", "All {n} planned steps are done."),
        "de": ("Der geplante Schritt ist erledigt.", "Alle {n} geplanten Schritte sind erledigt."),
        "fr": ("L'étape prévue est terminée.", "Les {n} étapes prévues sont terminées."),
    },
    "final_some_missing": {
        "en": ("{done} of {n} planned step is done; see what is missing below.",
               "{done} of {n} planned steps are done; see what is missing below."),
        "de": ("{done} von {n} geplanten Schritt ist erledigt; was fehlt, steht unten.",
               "{done} von {n} geplanten Schritten sind erledigt; was fehlt, steht unten."),
        "fr": ("{done} étape sur {n} est terminée ; ce qui manque est indiqué ci-dessous.",
               "{done} étapes sur {n} sont terminées ; ce qui manque est indiqué ci-dessous."),
    },
    "final_no_steps": {
        "en": "No steps were planned in this round.",
        "de": "In dieser Runde waren keine Schritte geplant.",
        "fr": "Aucune étape n'était prévue dans ce tour.",
    },
    "delivered": {"en": "Delivered", "de": "Geliefert", "fr": "Livré"},
    "missing": {"en": "Missing", "de": "Fehlt", "fr": "Manquant"},
    "wrong_language": {
        "en": "step {id} ({agent}) is written in {written}, not in {wanted} as asked",
        "de": "Schritt {id} ({agent}) ist auf {written} geschrieben, nicht wie gewünscht auf {wanted}",
        "fr": "l'étape {id} ({agent}) est écrite en {written}, pas en {wanted} comme demandé",
    },
    "done_steps": {"en": "Completed steps", "de": "Erledigte Schritte", "fr": "Étapes terminées"},
    "task_failed": {
        "en": "step {id} ({agent}) failed",
        "de": "Schritt {id} ({agent}) ist fehlgeschlagen",
        "fr": "l'étape {id} ({agent}) a échoué",
    },
    "task_skipped": {
        "en": "step {id} ({agent}) was skipped: {reason}",
        "de": "Schritt {id} ({agent}) wurde übersprungen: {reason}",
        "fr": "l'étape {id} ({agent}) a été ignorée : {reason}",
    },
    "depends_on_broken": {
        "en": "it needs step {id} ({agent}), which did not complete",
        "de": "er braucht Schritt {id} ({agent}), der nicht abgeschlossen wurde",
        "fr": "elle dépend de l'étape {id} ({agent}), qui n'a pas abouti",
    },
    "doc_never_produced": {
        "en": "planned document {name} was not produced",
        "de": "das geplante Dokument {name} wurde nicht erstellt",
        "fr": "le document prévu {name} n'a pas été produit",
    },
    "continuing": {
        "en": "Continuing round {round}: reusing what it delivered ({done}); running again: {todo}.",
        "de": "Fortsetzung von Runde {round}: Bereits Geliefertes wird übernommen ({done}); erneut ausgeführt: {todo}.",
        "fr": "Reprise du tour {round} : ce qui a été livré est repris ({done}) ; relancé : {todo}.",
    },
    "nothing": {"en": "nothing", "de": "nichts", "fr": "rien"},
    "report_name": {"en": "report", "de": "bericht", "fr": "rapport"},  # a written document's file name
    "at_page": {"en": "page {at}", "de": "Seite {at}", "fr": "page {at}"},
    "at_sheet": {"en": "sheet {at}", "de": "Blatt {at}", "fr": "feuille {at}"},
    "nothing_delivered": {
        "en": "no documents",
        "de": "keine Dokumente",
        "fr": "aucun document",
    },
}

# The name of a language in the reply language, for sentences such as "translation into ...".
LANGUAGE_LABELS: dict[str, dict[str, str]] = {
    "en": {"en": "English", "de": "Englische", "fr": "anglais"},
    "de": {"en": "German", "de": "Deutsche", "fr": "allemand"},
    "fr": {"en": "French", "de": "Französische", "fr": "français"},
    "es": {"en": "Spanish", "de": "Spanische", "fr": "espagnol"},
    "it": {"en": "Italian", "de": "Italienische", "fr": "italien"},
}

def say(key: str, language: str, **values: object) -> str:
    """The phrase `key` in `language` (English when that language is missing), filled in."""
    table = PHRASES[key]
    if language not in table:
        language = "en"
    phrase = table[language]
    if isinstance(phrase, tuple):
        phrase = phrase[0] if singular(values.get("n"), language) else phrase[1]
    return phrase.format(**values)


def singular(count: object, language: str) -> bool:
    """Whether `count` takes the singular: 1 in English and German, 0 and 1 in French."""
    if not isinstance(count, int):
        return False
    return count in (0, 1) if language == "fr" else count == 1


def language_label(code: str, language: str) -> str:
    """How `language` speakers name the language `code`."""
    labels = LANGUAGE_LABELS.get(code)
    if not labels:
        return code
    return labels.get(language, labels["en"])
