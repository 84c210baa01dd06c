// Whether an SBOM names every package the production install holds, read without I/O: `npm sbom
// --omit=dev` leaves out a production dependency that the workspace root also lists as a
// devDependency (npm/cli#7909; pg, knex and jose here), so the SBOM is held to `npm ls --omit=dev`.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `name@version` of every component of a CycloneDX document, nested ones included. */
export function sbomComponents(sbom: unknown): Set<string> {
  const found = new Set<string>();
  const walk = (components: unknown) => {
    for (const c of Array.isArray(components) ? components.filter(isObj) : []) {
      const name = typeof c.group === 'string' && c.group ? `${c.group}/${String(c.name)}` : String(c.name);
      found.add(`${name}@${String(c.version)}`);
      walk(c.components);
    }
  };
  if (isObj(sbom)) walk(sbom.components);
  return found;
}

/** `name@version` of each package of `npm ls --all --json` output, each once (links to workspaces left out). */
export function installedPackages(ls: unknown): Set<string> {
  const found = new Set<string>();
  const walk = (dependencies: unknown) => {
    if (!isObj(dependencies)) return;
    for (const [name, d] of Object.entries(dependencies)) {
      if (!isObj(d) || typeof d.version !== 'string' || d.missing === true) continue;
      const key = `${name}@${d.version}`;
      if (found.has(key)) continue;
      if (typeof d.resolved !== 'string' || !d.resolved.startsWith('file:')) found.add(key);
      walk(d.dependencies);
    }
  };
  if (isObj(ls)) walk(ls.dependencies);
  return found;
}

/** The installed packages the SBOM does not name, sorted. */
export const missingFromSbom = (sbom: unknown, ls: unknown): string[] => {
  const named = sbomComponents(sbom);
  return [...installedPackages(ls)].filter((p) => !named.has(p)).sort();
};
