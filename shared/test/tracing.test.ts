import assert from 'node:assert/strict';
import { createLogger } from '../src/logger.ts';
import { InMemorySpanExporter, SpanKind, activeTraceparent, createTracing, traceHeaders, withTraceContext } from '../src/tracing.ts';

// docs/adr/0024-observability.md: W3C trace context continued, or a new trace when absent or malformed.
describe('tracing', () => {
  const given = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const spans = new InMemorySpanExporter();
  const tracing = createTracing({ service: 'test', exporter: spans });
  after(() => tracing.shutdown());

  it('continues a traceparent: same trace, a new span whose parent is the given one', () => {
    const { span, context } = tracing.start('request', given, SpanKind.SERVER);
    const traceparent = withTraceContext(context, () => activeTraceparent());
    span.end();
    assert.match(traceparent!, /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    assert.notEqual(traceparent!.split('-')[2], '00f067aa0ba902b7');
    const ended = spans.getFinishedSpans().at(-1)!;
    assert.equal(ended.parentSpanContext?.spanId, '00f067aa0ba902b7');
  });

  for (const bad of [undefined, '', 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01', `${given}x`.replace('-01x', '-zz')]) {
    it(`starts a new trace for ${JSON.stringify(bad)}`, () => {
      const { span, context } = tracing.start('request', bad, SpanKind.SERVER);
      const traceparent = withTraceContext(context, () => activeTraceparent());
      span.end();
      assert.match(traceparent!, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      assert.notEqual(traceparent!.split('-')[1], '00000000000000000000000000000000');
      assert.notEqual(traceparent!.split('-')[1], '4bf92f3577b34da6a3ce929d0e0e4736');
    });
  }

  it('has no traceparent outside a span, and no NATS header without one', () => {
    assert.equal(activeTraceparent(), undefined);
    assert.equal(traceHeaders(undefined), undefined);
    assert.equal(traceHeaders(null), undefined);
    assert.equal(traceHeaders(given)!.get('traceparent'), given);
  });

  it('runs work in a span of the trace with a logger carrying its ids, across awaits, and ends it on failure too', async () => {
    const logger = createLogger('test', 'info');
    for (const transport of logger.transports) transport.silent = true;
    const lines: Record<string, unknown>[] = [];
    logger.on('data', (line: Record<string, unknown>) => lines.push(line));
    const seen = await tracing.inSpan('message', given, logger, async (log) => {
      await new Promise((r) => setTimeout(r, 5));
      log.info('inside');
      return activeTraceparent();
    });
    assert.equal(seen!.split('-')[1], '4bf92f3577b34da6a3ce929d0e0e4736', 'the context survives an await');
    assert.deepEqual(
      { trace_id: lines.at(-1)!.trace_id, span_id: lines.at(-1)!.span_id },
      { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: seen!.split('-')[2] },
    );
    const before = spans.getFinishedSpans().length;
    await assert.rejects(
      tracing.inSpan('message', given, logger, async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(spans.getFinishedSpans().length, before + 1, 'the failed span ended');
    assert.equal(spans.getFinishedSpans().at(-1)!.status.code, 2, 'marked as an error');
    assert.equal(activeTraceparent(), undefined, 'nothing leaks out of the span');
  });
});
