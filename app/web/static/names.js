// Names and dates a person reads: a file's type ("Excel workbook"), a title cut at a word, when.

const TYPES = {
  "application/pdf": "PDF document",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel workbook",
  "application/vnd.ms-excel": "Excel workbook (old format)",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
  "application/msword": "Word document (old format)",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint presentation",
  "application/vnd.oasis.opendocument.text": "OpenDocument text",
  "application/vnd.oasis.opendocument.spreadsheet": "OpenDocument spreadsheet",
  "application/vnd.oasis.opendocument.presentation": "OpenDocument presentation",
  "text/plain": "Text file", "text/csv": "CSV table", "text/tab-separated-values": "TSV table",
  "text/markdown": "Markdown text", "text/html": "Web page (HTML)", "application/json": "JSON data",
  "application/xml": "XML data", "text/xml": "XML data", "application/zip": "ZIP archive",
  "image/png": "PNG image", "image/jpeg": "JPEG image", "image/gif": "GIF image", "image/tiff": "TIFF image",
  "image/webp": "WebP image", "image/bmp": "BMP image",
};

// A file's type as a person names it ("Excel workbook"), not its MIME type.
export function friendlyType(mime, ext) {
  const bare = (mime || "").split(";")[0].trim().toLowerCase();
  if (TYPES[bare]) return TYPES[bare];
  if (ext) return `${String(ext).toUpperCase()} file`;
  return bare ? "File" : "";
}

// A title cut at a word, with an ellipsis, when it is too long for the list.
export function shortTitle(title, max = 48) {
  const text = String(title).replace(/\s+/g, " ").trim();
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s.,;:!?-]+$/, "")}…`;
}

// When a conversation was last active, as a list shows it: the time today, else the day (and the
// year when it is not this one).
export function when(stamp, now = new Date()) {
  const date = new Date(stamp);
  if (Number.isNaN(date.getTime())) return "";
  if (date.toDateString() === now.toDateString()) {
    return date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  }
  const day = { day: "numeric", month: "short" };
  if (date.getFullYear() !== now.getFullYear()) day.year = "numeric";
  return date.toLocaleDateString(undefined, day);
}

// A document's name with its extension ("q3_notes.txt"), as the person named the file.
export function fileName(doc) {
  return doc.ext && !doc.name.endsWith(`.${doc.ext}`) ? `${doc.name}.${doc.ext}` : doc.name;
}
