// One start of a service process for bench:startup: spawned, timed until /readyz answers, its
// resident memory then and after a run of /livez requests, stopped.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort } from '@platform/dev-stack/ports';
import { isRunning, stopProcess } from '@platform/dev-stack/processes';
import { cpuSeconds } from './cpu.ts';

export type Mode = 'tsx' | 'compiled';
export type Service = 'management-service' | 'data-service';
/** `cpu_ready_s`: CPU seconds the process used until ready, less swayed than `ready_ms` by what else runs on the machine. */
export type StartFigures = { ready_ms: number; cpu_ready_s: number; rss_ready_mb: number; rss_after_livez_mb: number };

/** How each mode runs a service: its TypeScript through tsx, or the compiled build as production does. */
export const modeArgs: Record<Mode, (service: Service) => string[]> = {
  tsx: (service) => ['--import', 'tsx', `${service}/src/main.ts`],
  compiled: (service) => ['--conditions=compiled', '--enable-source-maps', `${service}/dist/main.js`],
};

const rssMb = (pid: number): number => {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Math.round(Number(kb) / 102.4) / 10;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startOnce(options: {
  root: string;
  service: Service;
  mode: Mode;
  env: Record<string, string>;
  livezRequests: number;
}): Promise<StartFigures> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, modeArgs[options.mode](options.service), {
    cwd: options.root,
    // Nothing of this process's own loader reaches the child: each mode brings what it needs.
    env: { ...process.env, NODE_OPTIONS: '', HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: '0', LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (;;) {
      if (!isRunning(child)) throw new Error(`${options.service} (${options.mode}) exited before it was ready (code ${child.exitCode})`);
      if (performance.now() - started > 180_000) throw new Error(`${options.service} (${options.mode}) not ready within 180 s`);
      const ok = await fetch(`${url}/readyz`).then(
        (res) => res.ok,
        () => false,
      );
      if (ok) break;
      await sleep(10);
    }
    const readyMs = performance.now() - started;
    const cpuReady = cpuSeconds([child.pid!]);
    const rssReady = rssMb(child.pid!);
    for (let i = 0; i < options.livezRequests; i++) {
      const res = await fetch(`${url}/livez`);
      if (!res.ok) throw new Error(`/livez answered ${res.status}`);
      await res.arrayBuffer();
    }
    return { ready_ms: Math.round(readyMs), cpu_ready_s: Math.round(cpuReady * 100) / 100, rss_ready_mb: rssReady, rss_after_livez_mb: rssMb(child.pid!) };
  } finally {
    await stopProcess(child, { name: options.service, signal: 'SIGTERM', graceMs: 15_000, log: console.error });
  }
}
