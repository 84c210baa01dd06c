import winston from 'winston';

export type Logger = winston.Logger;

/** JSON-lines logger; child loggers carry request_id, tenant and entity ids in scope. */
export function createLogger(service: string, level = 'info'): Logger {
  return winston.createLogger({
    level,
    defaultMeta: { service },
    format: winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json()),
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn'] })],
  });
}
