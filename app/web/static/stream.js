// The event stream's text (text/event-stream) as events: each block's `event:` kind, its `data:`
// lines joined and parsed as JSON, and its `id:` (sent back as Last-Event-ID on a reconnect).

export async function readEvents(body, alive, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (alive()) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let kind = "message";
      let id = "";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) kind = line.slice(6).trim();
        else if (line.startsWith("id:")) id = line.slice(3).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length && alive()) onEvent(kind, JSON.parse(data.join("\n")), id);
    }
  }
}
