import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

/**
 * One setting read from the environment. `parse` turns the raw text into the value or throws an
 * Error whose message says what is wrong; `secret` settings may also come from `<NAME>_FILE`.
 */
export type Setting<T> = {
  description: string;
  default?: T;
  required?: boolean;
  secret?: boolean;
  parse: (raw: string) => T;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Values<S extends Record<string, Setting<unknown>>> = {
  readonly [K in keyof S]: S[K] extends Setting<infer T> ? (S[K] extends { required: true } | { default: T } ? T : T | undefined) : never;
};

/**
 * Reads and validates every setting at once, so a misconfigured process reports all problems in
 * one message and stops before it serves anything. The result is frozen.
 */
export function loadConfig<S extends Record<string, Setting<unknown>>>(spec: S, env: NodeJS.ProcessEnv = process.env): Values<S> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(spec)) {
    let raw = env[name];
    const file = env[`${name}_FILE`];
    if (raw === undefined && file !== undefined && setting.secret) {
      try {
        raw = readFileSync(file, 'utf8').trim();
      } catch {
        problems.push(`${name}_FILE points to ${file}, which cannot be read.`);
        continue;
      }
    }
    if (raw === undefined || raw === '') {
      if (setting.required) problems.push(`${name} is required: ${setting.description}.`);
      out[name] = setting.default;
      continue;
    }
    try {
      out[name] = setting.parse(raw);
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message} (${setting.description}).`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as Values<S>;
}

export const parsers = {
  string: (raw: string) => raw,
  integer:
    (min: number, max: number = Number.MAX_SAFE_INTEGER) =>
    (raw: string) => {
      if (!/^-?\d+$/.test(raw)) throw new Error(`"${raw}" is not a whole number`);
      const n = Number(raw);
      if (n < min || n > max) throw new Error(`${n} is outside ${min}..${max}`);
      return n;
    },
  url:
    (...protocols: string[]) =>
    (raw: string) => {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new Error(`"${raw.replace(/\/\/[^@/]*@/, '//***@')}" is not a URL`);
      }
      if (protocols.length > 0 && !protocols.includes(url.protocol.replace(/:$/, ''))) {
        throw new Error(`expected a ${protocols.join(' or ')} URL`);
      }
      return raw;
    },
  /**
   * A NATS server's URL, or a cluster's servers comma-separated, the others bare or as URLs
   * (`nats://user:password@10.0.0.1:4222,10.0.0.2:4222`); credentials never appear in the message.
   */
  natsServers: (raw: string) => {
    const [first, ...others] = raw.split(',').map((part) => part.trim());
    const scheme = /^([a-z]+):\/\//.exec(first!)?.[1] ?? '';
    for (const [i, part] of [first!, ...others].entries()) {
      try {
        if (part === '') throw new Error('nothing between two commas');
        const url = parsers.url('nats', 'tls')(part.includes('://') || i === 0 ? part : `${scheme}://${part}`);
        if (new URL(url).hostname === '') throw new Error(`"${part.replace(/\/\/[^@/]*@/, '//***@')}" names no host`);
      } catch (error) {
        const which = others.length > 0 ? `server ${i + 1} of ${others.length + 1}: ` : '';
        const example = 'e.g. nats://127.0.0.1:4222, or a cluster: nats://10.0.0.1:4222,10.0.0.2:4222';
        throw new Error(`${which}${(error as Error).message}, ${example}`, { cause: error });
      }
    }
    return raw;
  },
  oneOf:
    <T extends string>(...values: T[]) =>
    (raw: string) => {
      if (!values.includes(raw as T)) throw new Error(`"${raw}" is not one of ${values.join(', ')}`);
      return raw as T;
    },
  /** An address a listener binds to; a host name is refused, as it may resolve to an interface nobody meant. */
  ipAddress: (raw: string) => {
    if (isIP(raw) === 0) throw new Error(`"${raw}" is not an IP address (e.g. 127.0.0.1, 0.0.0.0 or ::)`);
    return raw;
  },
  boolean: (raw: string) => {
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
    throw new Error(`"${raw}" is not true or false`);
  },
};
