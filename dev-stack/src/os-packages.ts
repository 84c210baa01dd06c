import { execFileSync } from 'node:child_process';

export function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure `binary` is there: installs Debian's package `pkg` when it is missing and this process
 * may (root with apt-get); otherwise stops with a message that says what to do.
 */
export function ensureInstalled(binary: string, pkg: string, log: (line: string) => void, otherwise: string): string {
  if (onPath(binary)) return binary;
  if (process.getuid?.() === 0 && onPath('apt-get')) {
    log(`${binary} is missing: installing it from the OS packages (apt-get install ${pkg})`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () => execFileSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: 'inherit', env });
    try {
      install();
    } catch {
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
      install();
    }
    if (onPath(binary)) return binary;
  }
  throw new Error(`${binary} is not installed. Install it (Debian/Ubuntu: sudo apt-get install ${pkg}) ${otherwise}.`);
}

/** True when `python` can import `module`. */
export function pythonHas(python: string, module: string): boolean {
  try {
    execFileSync(python, ['-c', `import ${module}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure `python` can import `module`: installs Debian's package `pkg` (python3-numpy, say) when
 * it cannot and this process may (root with apt-get), as ensureInstalled does for binaries. Returns
 * false instead of stopping when the module is still missing (a baseline the caller can skip).
 */
export function ensurePythonModule(python: string, module: string, pkg: string, log: (line: string) => void): boolean {
  if (!onPath(python)) return false;
  if (pythonHas(python, module)) return true;
  if (process.getuid?.() === 0 && onPath('apt-get')) {
    log(`${python} cannot import ${module}: installing it from the OS packages (apt-get install ${pkg})`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () => execFileSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: 'inherit', env });
    try {
      install();
    } catch {
      try {
        execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
        install();
      } catch {
        return false;
      }
    }
  }
  return pythonHas(python, module);
}
