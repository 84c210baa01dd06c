// What the image records about the work tree it was built from.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const git = (args: string[]) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

export type Revision = {
  /** The root package.json version. */
  version: string;
  /** The short commit, with `-dirty` when the work tree has changes the commit does not hold. */
  revision: string;
  /** The repository's remote, when it has one (the image's source label). */
  source: string;
};

export function currentRevision(root = '.'): Revision {
  const version = (JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { version?: string }).version ?? '0.0.0';
  const commit = git(['-C', root, 'rev-parse', '--short', 'HEAD']);
  const dirty = git(['-C', root, 'status', '--porcelain']) !== '';
  let source = '';
  try {
    source = git(['-C', root, 'remote', 'get-url', 'origin']);
  } catch {
    // A clone without a remote: the label stays empty.
  }
  return { version, revision: dirty ? `${commit}-dirty` : commit, source };
}
