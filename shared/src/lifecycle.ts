/**
 * What a start-up has opened, closed again in reverse order: on stop, and when a later step of the
 * start-up fails (so a failed start leaves no connection or listener behind).
 */
export class Resources {
  private readonly closers: (() => Promise<void> | void)[] = [];

  add<T>(resource: T, close: (resource: T) => Promise<unknown> | unknown): T {
    this.closers.push(async () => {
      await close(resource);
    });
    return resource;
  }

  async closeAll(): Promise<void> {
    let first: unknown;
    for (const close of this.closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        first ??= error;
      }
    }
    if (first) throw first;
  }

  /** Runs a start-up; if it throws, closes what it had opened and rethrows. */
  async build<T>(start: (resources: Resources) => Promise<T>): Promise<T> {
    try {
      return await start(this);
    } catch (error) {
      await this.closeAll().catch(() => undefined);
      throw error;
    }
  }
}
