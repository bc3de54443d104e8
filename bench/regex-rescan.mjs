// The plain-JS baseline of the marker benchmarks (node and Chromium): a line-marker parser that
// re-runs its regexes over the accumulated text after every chunk, as many streaming frontends
// do; it returns the markers' raw values, the payload's data and the display text.
const LINE = /^[ \t]*(?:[-*+] )?\**(SUGGESTIONS|OPTIONS|EXTRACTED_DATA|PROPOSED_MESSAGE|TARGET_FIELD)\**:\**[ \t]*(.*)$/gm;
const PAYLOAD = /^[ \t]*SCHEMA_PROPOSAL:\s*([\s\S]*)$/m;

/** Parses `chunks` the naive way: everything again after each chunk. */
export function regexRescan(chunks) {
  let buffer = "";
  let result;
  for (const chunk of chunks) {
    buffer += chunk;
    const markers = {};
    for (const match of buffer.matchAll(LINE)) markers[match[1]] = match[2];
    let payload;
    const body = PAYLOAD.exec(buffer);
    if (body) {
      try {
        payload = JSON.parse(body[1].slice(0, body[1].lastIndexOf("}") + 1));
      } catch {
        payload = undefined;
      }
    }
    const display = buffer.replace(LINE, "").replace(PAYLOAD, "");
    result = { markers, payload, display };
  }
  return result;
}
