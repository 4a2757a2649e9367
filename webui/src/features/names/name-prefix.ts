/** What the user typed as an NDN name prefix, made canonical: a leading "/", no trailing one. */
export function normalizePrefix(text: string): string {
  let name = text.trim();
  if (!name) return "";
  if (!name.startsWith("/")) name = `/${name}`;
  name = name.replace(/\/{2,}/g, "/").replace(/\/+$/, "");
  return name;
}

/** `/a/b/c` -> [`/a`, `/a/b`, `/a/b/c`] */
export function ancestors(name: string): string[] {
  const parts = name.split("/").filter(Boolean);
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join("/")}`);
}
