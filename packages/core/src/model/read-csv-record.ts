/**
 * The first record of `text` as Go's encoding/csv reads it with its defaults, which is how pflag
 * splits a list flag's value (`--optional-capability=Build,Console` is two values): fields split
 * at commas, a field that starts with `"` is quoted (`""` inside is one quote, commas and line
 * breaks inside are kept), a quote anywhere else is an error, and the record ends at the first
 * line break outside quotes. Throws an Error saying what is wrong, as the flag parser would refuse.
 */
export function readCsvRecord(text: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = "";
    if (text[i] === '"') {
      i += 1;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote < 0) throw new Error(`extraneous or missing " in quoted field: ${text}`);
        field += text.slice(i, quote);
        i = quote + 1;
        if (text[i] !== '"') break;
        field += '"';
        i += 1;
      }
      if (i < text.length && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") {
        throw new Error(`extraneous or missing " in quoted field: ${text}`);
      }
    } else {
      const end = /[,\r\n]/.exec(text.slice(i));
      field = end ? text.slice(i, i + end.index) : text.slice(i);
      if (field.includes('"')) throw new Error(`bare " in non-quoted field: ${text}`);
      i += field.length;
    }
    fields.push(field);
    if (text[i] !== ",") return fields;
    i += 1;
  }
}
