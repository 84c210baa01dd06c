import type { DuckDBConnection } from '@duckdb/node-api';

/** A step of a long job and how far it is (0–1, when known). */
export type ProgressEvent = { step: string; fraction?: number };
export type ProgressSink = (event: ProgressEvent) => void;

export const silentProgress: ProgressSink = () => undefined;

/**
 * Progress on a terminal: a redrawn bar when the stream is a TTY, otherwise plain lines (a new
 * step, then every 10 % or 5 s), so logs of a CI job or a pod stay readable. `finish` ends the
 * bar's line.
 */
export function consoleProgress(stream: NodeJS.WriteStream = process.stderr): ProgressSink & { finish: () => void } {
  let step = '';
  let lastLine = 0;
  let lastTenth = -1;
  let drawn = false;
  const bar = (fraction: number) => {
    const width = 30;
    const full = Math.round(fraction * width);
    return `[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${String(Math.floor(fraction * 100)).padStart(3)} %`;
  };
  const sink = (event: ProgressEvent) => {
    const now = Date.now();
    if (stream.isTTY) {
      if (event.step === step && event.fraction !== 1 && now - lastLine < 100) return;
      lastLine = now;
      if (event.step !== step && drawn) stream.write('\n');
      step = event.step;
      stream.write(`\r${event.fraction === undefined ? '' : `${bar(event.fraction)} `}${event.step}\x1b[K`);
      drawn = true;
      return;
    }
    // Plain lines: when the step changes, at each further tenth, or after 5 s without a line.
    const tenth = event.fraction === undefined ? -1 : Math.floor(event.fraction * 10);
    const changed = event.step !== step;
    if (!changed && tenth <= lastTenth && now - lastLine < 5000) return;
    stream.write(`${event.step}${event.fraction === undefined ? '' : ` ${Math.floor(event.fraction * 100)} %`}\n`);
    step = event.step;
    lastLine = now;
    lastTenth = changed ? tenth : Math.max(lastTenth, tenth);
  };
  return Object.assign(sink, {
    finish: () => {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  });
}

/**
 * Runs one statement and reports DuckDB's own progress of it while it runs (the connection must
 * have `enable_progress_bar` on; printing is off so DuckDB writes nothing itself).
 */
export async function runWithProgress(conn: DuckDBConnection, sql: string, step: string, progress: ProgressSink): Promise<void> {
  progress({ step, fraction: 0 });
  const timer = setInterval(() => {
    const { percentage } = conn.progress;
    if (percentage >= 0) progress({ step, fraction: Math.min(1, percentage / 100) });
  }, 250);
  try {
    await conn.run(sql);
  } finally {
    clearInterval(timer);
  }
  progress({ step, fraction: 1 });
}

export async function enableProgress(conn: DuckDBConnection): Promise<void> {
  await conn.run('set enable_progress_bar = true');
  await conn.run('set enable_progress_bar_print = false');
}
