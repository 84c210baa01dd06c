import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import winston from 'winston';
import { accessLog, createLogger } from '../src/logger.ts';

// docs/adr/0031-http-hot-path.md: the access log writes as text the line that a child logger of
// winston's JSON format wrote, with the same fields in the same order.

/** A logger of createLogger whose lines go to memory. */
function captured(level: string): { logger: winston.Logger; lines: () => string[] } {
  const logger = createLogger('svc', level);
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  logger.clear().add(new winston.transports.Stream({ stream }));
  return { logger, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

const withoutTime = (line: string) => line.replace(/"timestamp":"[^"]+"/, '"timestamp":"T"');

describe('access log', () => {
  it('writes the line winston writes for the same request, key for key', async () => {
    const { logger, lines } = captured('info');
    const entries = [
      {
        message: 'request',
        method: 'GET',
        path: '/portfolios/P1',
        operation: 'getPortfolio',
        status: 200,
        duration_ms: 1.25,
        request_id: 'R1',
        trace_id: 't1',
        span_id: 's1',
        tenant: 'acme',
      },
      { message: 'request', method: 'POST', path: '/x"\\\u2028\u0001', status: 404, duration_ms: 0.5, request_id: 'R2' },
      {
        message: 'request closed by the client before its answer',
        method: 'PATCH',
        path: '/users/U1',
        operation: 'updateUser',
        duration_ms: 12,
        request_id: 'R3',
        trace_id: 't3',
        span_id: 's3',
      },
    ];
    const write = accessLog(logger);
    for (const e of entries) {
      write(e);
      const { message, method, path, operation, status, duration_ms, request_id, trace_id, span_id, tenant } = e as typeof e & Record<string, unknown>;
      const ids = { request_id, ...(trace_id ? { trace_id, span_id } : {}), ...(tenant ? { tenant } : {}) };
      logger.child(ids).info(message, { method, path, operation, status, duration_ms });
    }
    await new Promise((r) => setImmediate(r));
    const written = lines().map(withoutTime);
    assert.equal(written.length, 6);
    for (let i = 0; i < written.length; i += 2) assert.equal(written[i], written[i + 1]);
    assert.deepEqual(JSON.parse(written[0]!), { ...entries[0], level: 'info', service: 'svc', timestamp: 'T' });
  });

  it('writes nothing when info lines are not logged', async () => {
    const { logger, lines } = captured('warn');
    accessLog(logger)({ message: 'request', method: 'GET', path: '/', status: 200, duration_ms: 1, request_id: 'R' });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(lines(), []);
  });
});
