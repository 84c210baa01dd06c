/**
 * A broker URL fit for a listing or a log line: the password replaced by `***` (the user stays, so
 * an operator still sees which account is used). Text that is not a URL is returned unchanged
 * only when it carries no `user:password@` part; otherwise it is withheld whole.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return /\/\/[^/@]*:[^/@]*@/.test(url) ? '***' : url;
  }
  if (!parsed.password) return url;
  parsed.password = '***';
  return parsed.toString();
}

/** A destination as the CLI shows it: every field, its URL redacted. */
export function redactDestination<T extends { url: string }>(destination: T): T {
  return { ...destination, url: redactUrl(destination.url) };
}
