import winston from 'winston';

export type Logger = winston.Logger;

/** Where winston keeps the finished line of a log entry and its level (triple-beam's MESSAGE and LEVEL). */
const MESSAGE = Symbol.for('message');
const LEVEL = Symbol.for('level');

/** JSON-lines logger; child loggers carry request_id, tenant and entity ids in scope. */
export function createLogger(service: string, level = 'info'): Logger {
  const lineFormat = winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json());
  // An entry that arrives with its line already written (the access log) keeps it.
  const format = winston.format((info) => ((info as Record<symbol, unknown>)[MESSAGE] === undefined ? lineFormat.transform(info) : info))();
  return winston.createLogger({
    level,
    defaultMeta: { service },
    format,
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn'] })],
  });
}

/** One line of the access log: what a request was and how it ended. */
export type AccessEntry = {
  message: string;
  method: string;
  path: string;
  operation?: string;
  status?: number;
  duration_ms: number;
  request_id: string;
  trace_id?: string;
  span_id?: string;
  tenant?: string;
};

const field = (name: string, value: string | number | undefined) => (value === undefined ? '' : `,"${name}":${JSON.stringify(value)}`);

/**
 * The access log of an HTTP app (docs/adr/0031-http-hot-path.md): the same JSON line, with the same
 * fields in the same order, as `logger.child({ request_id, … }).info(message, { … })` wrote, but
 * written as text at once and handed on with its line finished (the format passes it through),
 * with no child logger per request, and nothing built at all when info lines are not logged.
 */
export function accessLog(logger: Logger): (entry: AccessEntry) => void {
  const service = (logger.defaultMeta as { service?: string } | undefined)?.service;
  return (e) => {
    if (logger.silent || !logger.isInfoEnabled()) return;
    const timestamp = new Date().toISOString();
    // Keys in the order winston's JSON format sorts them.
    const line =
      `{"duration_ms":${JSON.stringify(e.duration_ms)},"level":"info","message":${JSON.stringify(e.message)},"method":${JSON.stringify(e.method)}` +
      `${field('operation', e.operation)},"path":${JSON.stringify(e.path)},"request_id":${JSON.stringify(e.request_id)}${field('service', service)}` +
      `${field('span_id', e.span_id)}${field('status', e.status)}${field('tenant', e.tenant)},"timestamp":"${timestamp}"${field('trace_id', e.trace_id)}}`;
    const info: Record<string | symbol, unknown> = { level: 'info', service, timestamp, [LEVEL]: 'info', [MESSAGE]: line };
    for (const [key, value] of Object.entries(e)) if (value !== undefined) info[key] = value;
    logger.write(info as unknown as winston.LogEntry);
  };
}
