/** A line of a comment that may hold a command: it is outside code blocks and HTML comments. */
export interface CandidateLine {
  /** 1-based line number in the comment. */
  line: number;
  text: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The lines of a comment body where a command counts. Commands must start at column 0, so quoted
 * (`> …`) and indented lines never qualify; fenced code blocks and HTML comments are skipped whole,
 * as GitHub renders them (an unclosed fence runs to the end of the comment).
 */
export function commandLines(body: string): CandidateLine[] {
  const lines = body.split(/\r\n|\r|\n/);
  const candidates: CandidateLine[] = [];
  let fence: string | undefined;
  let inHtmlComment = false;
  lines.forEach((text, index) => {
    if (fence !== undefined) {
      const close = FENCE.exec(text);
      if (close && close[1]![0] === fence[0] && close[1]!.length >= fence.length && isBareFence(text))
        fence = undefined;
      return;
    }
    if (inHtmlComment) {
      if (text.includes("-->")) inHtmlComment = false;
      return;
    }
    const open = FENCE.exec(text);
    if (open) {
      fence = open[1]!;
      return;
    }
    if (text.startsWith("<!--")) {
      inHtmlComment = !text.includes("-->", 4);
      return;
    }
    candidates.push({ line: index + 1, text });
  });
  return candidates;
}

/** A closing fence carries nothing after its backticks or tildes. */
function isBareFence(text: string): boolean {
  return /^ {0,3}(`{3,}|~{3,})\s*$/.test(text);
}
