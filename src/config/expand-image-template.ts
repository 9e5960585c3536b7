/**
 * A PR's image from the repository's `pr_image` template (one payload tag's), or its release
 * payload from `pr_payload` (no `{tag}`: the schema refuses one there).
 */
export function expandImageTemplate(
  template: string,
  values: { org: string; repo: string; pr: number; sha: string; tag?: string },
): string {
  return template.replace(/\{(org|repo|pr|sha|tag)\}/g, (placeholder, key: keyof typeof values) =>
    values[key] === undefined ? placeholder : String(values[key]),
  );
}
