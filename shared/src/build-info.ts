// What a running process says about its build: the platform's version, the git revision the image
// was built from and the Node.js running it (docs/adr/0047-container-image.md). Read from the
// environment the image sets, so that `--version` needs no configuration and no file of the service.
import { readFileSync } from 'node:fs';

export type BuildInfo = {
  /** The platform's version (PLATFORM_VERSION in the image, else this package's version). */
  version: string;
  /** The git revision the image was built from; `unknown` outside an image. */
  revision: string;
  /** The Node.js version running the process, without the leading `v`. */
  node: string;
};

function packageVersion(): string {
  // shared/src/ and shared/dist/ both sit one folder below shared/package.json.
  try {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export function buildInfo(env: NodeJS.ProcessEnv, nodeVersion: string): BuildInfo {
  return {
    version: env.PLATFORM_VERSION || packageVersion(),
    revision: env.PLATFORM_REVISION || 'unknown',
    node: nodeVersion.replace(/^v/, ''),
  };
}

/**
 * For an entry point: when its first argument is `--version`, writes the build info as one JSON line
 * and returns true, so that the caller stops before reading any configuration. Only the first
 * argument counts, so that a command's own option of that name stays its own.
 */
export function answerVersionFlag(proc: { argv: readonly string[]; env: NodeJS.ProcessEnv; version: string }, write: (line: string) => void): boolean {
  if (proc.argv[2] !== '--version') return false;
  write(JSON.stringify(buildInfo(proc.env, proc.version)));
  return true;
}
