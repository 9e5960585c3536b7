/** Equality-based label selectors (`a=b,c!=d,e,!f`), the subset the executor uses. */
export function parseLabelSelector(text: string | null): (labels: Record<string, string>) => boolean {
  const terms = (text ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean)
    .map((term) => {
      const ne = term.indexOf("!=");
      if (ne > 0) return (l: Record<string, string>) => l[term.slice(0, ne)] !== term.slice(ne + 2);
      const eq = term.indexOf("=");
      if (eq > 0) {
        const key = term.slice(0, eq);
        const value = term.slice(term[eq + 1] === "=" ? eq + 2 : eq + 1);
        return (l: Record<string, string>) => l[key] === value;
      }
      if (term.startsWith("!")) return (l: Record<string, string>) => !(term.slice(1) in l);
      return (l: Record<string, string>) => term in l;
    });
  return (labels) => terms.every((matches) => matches(labels));
}
