"""What the project manager tells the user about files it could not read, and what to do about each.

Fixed sentences in English, German and French (English for any other language), written
without a model so that they are exact: which file, why, and the remedy, with the JSON shape
of the password a frontend sends for an encrypted file.
"""

from __future__ import annotations

import json

from agents.base import DocumentText

FORMATS = {
    "en": "PDF, Word (.docx), Excel (.xlsx, .xls), PowerPoint (.pptx), CSV/TSV, plain text, Markdown, JSON, XML, "
          "HTML, images (PNG, JPEG, GIF, TIFF, BMP, WebP) and ZIP archives of these",
    "de": "PDF, Word (.docx), Excel (.xlsx, .xls), PowerPoint (.pptx), CSV/TSV, Text, Markdown, JSON, XML, HTML, "
          "Bilder (PNG, JPEG, GIF, TIFF, BMP, WebP) und ZIP-Archive davon",
    "fr": "PDF, Word (.docx), Excel (.xlsx, .xls), PowerPoint (.pptx), CSV/TSV, texte brut, Markdown, JSON, XML, "
          "HTML, images (PNG, JPEG, GIF, TIFF, BMP, WebP) et archives ZIP de ces formats",
}

NOTICES: dict[str, dict[str, str]] = {
    "heading": {
        "en": "I could not read every file you sent:",
        "de": "Nicht alle Dateien, die Sie gesendet haben, konnte ich lesen:",
        "fr": "Je n'ai pas pu lire tous les fichiers que vous avez envoyés :",
    },
    "encrypted": {
        "en": "**{name}** (file {id}) is encrypted and no password was given for it. Send the password "
              "with your next message, in `passwords` under the file's id: `{shape}`",
        "de": "**{name}** (Datei {id}) ist verschlüsselt, und es wurde kein Passwort dafür angegeben. "
              "Senden Sie das Passwort mit Ihrer nächsten Nachricht in `passwords` unter der Nummer der "
              "Datei: `{shape}`",
        "fr": "**{name}** (fichier {id}) est chiffré et aucun mot de passe n'a été donné pour lui. Envoyez "
              "le mot de passe avec votre prochain message, dans `passwords` sous le numéro du fichier : "
              "`{shape}`",
    },
    "wrong_password": {
        "en": "**{name}** (file {id}) is encrypted and the password given does not open it. Check the "
              "password (letter case, keyboard layout) and send it again with your next message, in "
              "`passwords` under the file's id: `{shape}`",
        "de": "**{name}** (Datei {id}) ist verschlüsselt, und das angegebene Passwort öffnet sie nicht. "
              "Prüfen Sie das Passwort (Groß- und Kleinschreibung, Tastaturbelegung) und senden Sie es mit "
              "Ihrer nächsten Nachricht erneut in `passwords` unter der Nummer der Datei: `{shape}`",
        "fr": "**{name}** (fichier {id}) est chiffré et le mot de passe donné ne l'ouvre pas. Vérifiez le "
              "mot de passe (majuscules, disposition du clavier) et renvoyez-le avec votre prochain message, "
              "dans `passwords` sous le numéro du fichier : `{shape}`",
    },
    "corrupt": {
        "en": "**{name}** (file {id}) is damaged or is not really a {ext} file, so it could not be read. "
              "Upload it again, or a fresh copy or export of it.",
        "de": "**{name}** (Datei {id}) ist beschädigt oder keine echte {ext}-Datei und konnte nicht gelesen "
              "werden. Laden Sie sie erneut hoch, oder eine neue Kopie bzw. einen neuen Export davon.",
        "fr": "**{name}** (fichier {id}) est endommagé ou n'est pas vraiment un fichier {ext} : il n'a pas pu "
              "être lu. Téléversez-le de nouveau, ou une nouvelle copie ou un nouvel export.",
    },
    "unsupported": {
        "en": "**{name}** (file {id}) is in a format that is not read. The formats read are {formats}; "
              "save it in one of them (a .doc as .docx, a .ppt as .pptx) and upload it again.",
        "de": "**{name}** (Datei {id}) hat ein Format, das nicht gelesen wird. Gelesen werden {formats}; "
              "speichern Sie sie in einem davon (eine .doc als .docx, eine .ppt als .pptx) und laden Sie "
              "sie erneut hoch.",
        "fr": "**{name}** (fichier {id}) est dans un format qui n'est pas lu. Les formats lus sont : "
              "{formats} ; enregistrez-le dans l'un d'eux (un .doc en .docx, un .ppt en .pptx) et "
              "téléversez-le de nouveau.",
    },
    "refused": {
        "en": "**{name}** (file {id}) unpacks beyond the limits for archives and was not read. Upload the "
              "files it holds one by one.",
        "de": "**{name}** (Datei {id}) entpackt sich über die Grenzen für Archive hinaus und wurde nicht "
              "gelesen. Laden Sie die enthaltenen Dateien einzeln hoch.",
        "fr": "**{name}** (fichier {id}) dépasse une fois décompressé les limites des archives et n'a pas "
              "été lu. Téléversez un par un les fichiers qu'il contient.",
    },
    "timeout": {
        "en": "**{name}** (file {id}) took longer to read than the time limit allows. Try again later, or "
              "send it in smaller parts.",
        "de": "**{name}** (Datei {id}) brauchte zum Lesen länger als erlaubt. Versuchen Sie es später "
              "erneut oder senden Sie die Datei in kleineren Teilen.",
        "fr": "**{name}** (fichier {id}) a pris plus de temps à lire que la limite ne le permet. Réessayez "
              "plus tard, ou envoyez-le en parties plus petites.",
    },
    "error": {
        "en": "**{name}** (file {id}) was read, but its contents could not be stored. Try again; if it "
              "happens again, tell the operator of this service.",
        "de": "**{name}** (Datei {id}) wurde gelesen, aber ihr Inhalt konnte nicht gespeichert werden. "
              "Versuchen Sie es erneut; wenn es wieder passiert, informieren Sie den Betreiber.",
        "fr": "**{name}** (fichier {id}) a été lu, mais son contenu n'a pas pu être enregistré. Réessayez ; "
              "si cela se reproduit, prévenez l'exploitant du service.",
    },
    "nothing_delivered": {
        "en": "Nothing that was planned was delivered in this round: every planned step failed or was "
              "skipped (why is listed below).",
        "de": "In dieser Runde wurde nichts von dem Geplanten geliefert: Jeder geplante Schritt ist "
              "fehlgeschlagen oder wurde übersprungen (warum, steht unten).",
        "fr": "Rien de ce qui était prévu n'a été livré dans ce tour : chaque étape prévue a échoué ou a "
              "été ignorée (les raisons sont indiquées ci-dessous).",
    },
}


def nothing_delivered(language: str) -> str:
    """The sentence that opens the final message of a round none of whose planned steps finished."""
    return _say("nothing_delivered", language)


def _say(key: str, language: str, **values: object) -> str:
    table = NOTICES[key]
    return table.get(language, table["en"]).format(**values)


def password_shape(file_id: int | None) -> str:
    """The JSON a frontend sends to open an encrypted file with the next message."""
    fid = file_id if file_id is not None else 0
    return json.dumps({"prompt": "...", "listFileId": [fid], "passwords": {str(fid): "..."}})


def unreadable_note(documents: list[DocumentText], language: str) -> str:
    """A paragraph naming each document that could not be read, why, and what to do; "" when all were read."""
    lines = []
    for doc in documents:
        if not doc.problem:
            continue
        key = doc.problem if doc.problem in NOTICES else "corrupt"
        lines.append("- " + _say(key, language, name=doc.name, id=doc.file_id, ext=(doc.ext or "?").upper(),
                                 shape=password_shape(doc.file_id),
                                 formats=FORMATS.get(language, FORMATS["en"])))
    if not lines:
        return ""
    return "\n".join([_say("heading", language), *lines])
