import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../src/config.ts';
import { serviceSettings } from '../src/service-settings.ts';

describe('service settings', () => {
  it('defaults each setting, the metrics port to the one the service names', () => {
    for (const metricsPort of [9464, 9465]) {
      const config = loadConfig(serviceSettings({ metricsPort }), {});
      assert.deepEqual(
        { ...config },
        {
          TRUSTED_PROXIES: 0,
          OVERLOAD_SHEDDING: true,
          OVERLOAD_EVENT_LOOP_DELAY_MS: 50,
          OVERLOAD_MIN_LIMIT: 16,
          SHUTDOWN_GRACE_MS: 10_000,
          METRICS_HOST: '127.0.0.1',
          METRICS_PORT: metricsPort,
          OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
          NATS_STREAM_REPLICAS: 1,
          LOG_LEVEL: 'info',
        },
      );
    }
  });

  it('parses values given', () => {
    const config = loadConfig(serviceSettings({ metricsPort: 9464 }), {
      TRUSTED_PROXIES: '2',
      OVERLOAD_SHEDDING: 'false',
      OVERLOAD_EVENT_LOOP_DELAY_MS: '20',
      OVERLOAD_MIN_LIMIT: '4',
      SHUTDOWN_GRACE_MS: '0',
      METRICS_HOST: '0.0.0.0',
      METRICS_PORT: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
      NATS_STREAM_REPLICAS: '3',
      LOG_LEVEL: 'debug',
    });
    assert.equal(config.TRUSTED_PROXIES, 2);
    assert.equal(config.OVERLOAD_SHEDDING, false);
    assert.equal(config.OVERLOAD_EVENT_LOOP_DELAY_MS, 20);
    assert.equal(config.OVERLOAD_MIN_LIMIT, 4);
    assert.equal(config.SHUTDOWN_GRACE_MS, 0);
    assert.equal(config.METRICS_HOST, '0.0.0.0');
    assert.equal(config.METRICS_PORT, 0);
    assert.equal(config.OTEL_EXPORTER_OTLP_ENDPOINT, 'http://otel-collector:4318');
    assert.equal(config.NATS_STREAM_REPLICAS, 3);
    assert.equal(config.LOG_LEVEL, 'debug');
  });

  it('takes 1 to 5 stream replicas, and says so for any other value', () => {
    for (const n of [1, 2, 3, 4, 5])
      assert.equal(loadConfig(serviceSettings({ metricsPort: 9464 }), { NATS_STREAM_REPLICAS: String(n) }).NATS_STREAM_REPLICAS, n);
    for (const raw of ['0', '6', 'three', '3.0', '-3']) {
      assert.throws(
        () => loadConfig(serviceSettings({ metricsPort: 9464 }), { NATS_STREAM_REPLICAS: raw }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.equal(error.problems.length, 1);
          assert.match(error.problems[0]!, /^NATS_STREAM_REPLICAS: .*(is not a whole number|is outside 1\.\.5).*copies of each JetStream stream/);
          return true;
        },
      );
    }
  });

  it('refuses each bad value by its name, all at once', () => {
    const bad = {
      TRUSTED_PROXIES: '11',
      OVERLOAD_SHEDDING: 'sometimes',
      OVERLOAD_EVENT_LOOP_DELAY_MS: '0',
      SHUTDOWN_GRACE_MS: '-1',
      METRICS_HOST: 'localhost',
      METRICS_PORT: '65536',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector',
      NATS_STREAM_REPLICAS: '0',
      LOG_LEVEL: 'verbose',
    };
    assert.throws(
      () => loadConfig(serviceSettings({ metricsPort: 9464 }), bad),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(
          error.problems.map((p) => p.slice(0, p.indexOf(':'))),
          Object.keys(bad),
        );
        return true;
      },
    );
  });
});
