// podman, as the image scripts use it: Debian's packages installed when missing, and a
// containers.conf of the project's own (named by CONTAINERS_CONF, so nothing under /etc changes)
// that fixes what the defaults get wrong on these machines (docs/adr/0047-container-image.md).
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureInstalled } from './os-packages.ts';

// crun, podman's default runtime, fails on kernels with hybrid cgroups; runc does not. The default
// ulimits are higher than root may set in some sandboxes; these suffice for Node.js and DuckDB.
const CONTAINERS_CONF = `[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
`;

export type Podman = {
  /** The environment every podman call runs with (this process's, with CONTAINERS_CONF). */
  env: NodeJS.ProcessEnv;
  /** Runs podman and returns its standard output, trimmed; a failure throws with podman's message. */
  run: (args: string[], options?: Pick<ExecFileSyncOptions, 'stdio' | 'input' | 'timeout'>) => string;
};

/** podman, runc and mmdebstrap installed (as root with apt-get) and podman's configuration written to `dir`. */
export function ensurePodman(log: (line: string) => void, dir = join(tmpdir(), 'platform-podman')): Podman {
  const otherwise = 'to build and run the container image';
  ensureInstalled('podman', 'podman', log, otherwise);
  ensureInstalled('runc', 'runc', log, otherwise);
  ensureInstalled('newuidmap', 'uidmap', log, otherwise);
  ensureInstalled('mmdebstrap', 'mmdebstrap', log, otherwise);
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'containers.conf');
  writeFileSync(conf, CONTAINERS_CONF);
  const env = { ...process.env, CONTAINERS_CONF: conf };
  const run: Podman['run'] = (args, options = {}) =>
    String(execFileSync('podman', args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['pipe', 'pipe', 'pipe'], ...options }) ?? '').trim();
  return { env, run };
}
