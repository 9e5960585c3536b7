/**
 * Whether a registry (`host[:port]` as in image references) is on a list of hosts, `host:port`s
 * and `*.domain` patterns (any subdomain of domain, not domain itself). Case does not matter.
 */
export function createRegistryAllowList(patterns: readonly string[]): (registry: string) => boolean {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const pattern of patterns.map((p) => p.toLowerCase())) {
    if (pattern.startsWith("*.")) suffixes.push(pattern.slice(1));
    else exact.add(pattern);
  }
  return (registry) => {
    const name = registry.toLowerCase();
    const host = name.replace(/:\d+$/, "");
    return exact.has(name) || suffixes.some((suffix) => host.endsWith(suffix) && host.length > suffix.length);
  };
}
