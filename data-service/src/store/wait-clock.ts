// The time a piece of work spends waiting for DuckDB, summed over its calls.

/** Wrap each DuckDB call of a piece of work in `wait`; `ms` is then the time spent waiting for them (queries and their results). */
export class WaitClock {
  ms = 0;

  async wait<T>(work: Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work;
    } finally {
      this.ms += performance.now() - started;
    }
  }
}
