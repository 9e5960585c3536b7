/** The PR's image for one payload tag, from the repository's `pr_image` template. */
export function expandImageTemplate(
  template: string,
  values: { org: string; repo: string; pr: number; sha: string; tag: string },
): string {
  return template.replace(/\{(org|repo|pr|sha|tag)\}/g, (_, key: keyof typeof values) => String(values[key]));
}
