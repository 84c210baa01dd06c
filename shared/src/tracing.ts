import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  isSpanContextValid,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from './logger.ts';

export { SpanKind, type Span };
export { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * A service's tracing (docs/adr/0024-observability.md): spans of its own provider, W3C trace
 * context in and out (`traceparent`). Nothing is exported unless an OTLP endpoint or an exporter
 * (tests: an in-memory one) is given.
 */
export type Tracing = {
  tracer: Tracer;
  /** Starts a span whose parent is the `traceparent` given (a new trace when it is absent or malformed). */
  start: (name: string, traceparent: string | undefined, kind: SpanKind) => { span: Span; context: Context };
  /**
   * Runs `work` in a span continuing `traceparent`, with a logger whose lines carry its trace id;
   * outbox rows written inside carry it on (see `activeTraceparent`).
   */
  inSpan: <T>(name: string, traceparent: string | undefined, logger: Logger, work: (log: Logger) => Promise<T>) => Promise<T>;
  shutdown: () => Promise<void>;
};

export type TracingOptions = {
  service: string;
  /** OTLP/HTTP base endpoint (`/v1/traces` is appended); unset: nothing is exported. */
  otlpEndpoint?: string;
  /** Exports every span as it ends (tests). */
  exporter?: SpanExporter;
};

const propagator = new W3CTraceContextPropagator();
const headerGetter = { keys: (c: Record<string, string>) => Object.keys(c), get: (c: Record<string, string>, key: string) => c[key] };

let contextManagerSet = false;

export function createTracing(options: TracingOptions): Tracing {
  // The OpenTelemetry API keeps the active span in one context manager per process (it follows
  // async calls); every service in the process shares it, each with its own provider.
  if (!contextManagerSet) {
    contextManagerSet = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  const spanProcessors = [];
  if (options.otlpEndpoint) {
    spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: `${options.otlpEndpoint.replace(/\/+$/, '')}/v1/traces` })));
  }
  if (options.exporter) spanProcessors.push(new SimpleSpanProcessor(options.exporter));
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': options.service }), spanProcessors });
  const tracer = provider.getTracer(options.service);

  const ids = new RandomIdGenerator();
  const start = (name: string, traceparent: string | undefined, kind: SpanKind) => {
    const parent = traceparent ? propagator.extract(ROOT_CONTEXT, { traceparent }, headerGetter) : ROOT_CONTEXT;
    // Nothing exports spans: a span that records nothing carries the same ids on, as a sampled
    // span of the SDK would (the parent's trace and flags, or a new sampled trace), for a fraction
    // of its cost per request (docs/adr/0031-http-hot-path.md).
    if (spanProcessors.length === 0) {
      const from = trace.getSpanContext(parent);
      const valid = from !== undefined && isSpanContextValid(from);
      const span = trace.wrapSpanContext({
        traceId: valid ? from.traceId : ids.generateTraceId(),
        spanId: ids.generateSpanId(),
        traceFlags: valid ? from.traceFlags : TraceFlags.SAMPLED,
      });
      return { span, context: trace.setSpan(parent, span) };
    }
    const span = tracer.startSpan(name, { kind }, parent);
    return { span, context: trace.setSpan(parent, span) };
  };

  return {
    tracer,
    start,
    inSpan: async (name, traceparent, logger, work) => {
      const { span, context: ctx } = start(name, traceparent || undefined, SpanKind.CONSUMER);
      try {
        return await context.with(ctx, () => work(logger.child(traceFields(span))));
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
    shutdown: () => provider.shutdown(),
  };
}

/** The fields every log line in a span carries. */
export const traceFields = (span: Span): { trace_id: string; span_id: string } => {
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
};

/** The `traceparent` of the span active here (a request's, a consumed message's), if any. */
export function activeTraceparent(): string | undefined {
  const spanContext = trace.getSpanContext(context.active());
  if (!spanContext || !isSpanContextValid(spanContext)) return undefined;
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** Runs `work` with `ctx` active (a request's span around its handler). */
export const withTraceContext = <T>(ctx: Context | undefined, work: () => T): T => (ctx ? context.with(ctx, work) : work());

/** NATS message headers carrying `traceparent` (none when there is no trace to continue). */
export function traceHeaders(traceparent: string | null | undefined): MsgHdrs | undefined {
  if (!traceparent) return undefined;
  const h = headers();
  h.set('traceparent', traceparent);
  return h;
}
