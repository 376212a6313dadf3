// ebb/otel's metrics scraped through the OpenTelemetry Prometheus exporter.
//
// A flaky service (a node:http server on 127.0.0.1 that answers 503 to every third request) is
// called 30 times through a pipeline with retries and a breaker; the exporter's /metrics
// handler is then scraped, as Prometheus would, and the ebb_ lines are printed with the
// requests the service received.
//
//   npm i ebb @opentelemetry/api @opentelemetry/sdk-metrics @opentelemetry/exporter-prometheus
//   node examples/otel-prometheus.mjs
import { createServer } from 'node:http';
import * as api from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { exponential, pipeline, retrying } from 'ebb';
import { otel } from 'ebb/otel';
import { circuitBreaker } from 'ebb/resilience';

// The exporter serves /metrics from our own server, so that it needs no fixed port.
const exporter = new PrometheusExporter({ preventServerStart: true });
api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));

let received = 0;
const server = createServer((req, res) => {
  if (req.url === '/metrics') return exporter.getMetricsRequestHandler(req, res);
  received++;
  res.writeHead(received % 3 === 0 ? 503 : 200).end();
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

// The instrument after the meter provider: its meter is read once, when it is made.
const breaker = circuitBreaker();
const t = otel({ api, name: 'flaky', breaker });
const flaky = pipeline(
  [t.instrument(retrying({ backoff: exponential({ initialDelayMs: 5, maxAttempts: 3 }) })), breaker],
  { name: 'flaky' },
);

let failedCalls = 0; // a call whose retry the retry budget refused (10 retries, then 20 % of calls)
for (let i = 0; i < 30; i++) {
  await flaky
    .execute(async ({ signal }) => {
      const res = await fetch(`${origin}/item`, { signal });
      await res.arrayBuffer();
      if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
      return res.status;
    })
    .catch(() => failedCalls++);
}

const text = await (await fetch(`${origin}/metrics`)).text();
const ours = (line) => (line.startsWith('ebb_') && !line.includes('_bucket{')) || line.startsWith('# TYPE ebb_');
console.log(text.split('\n').filter(ours).join('\n'));
console.log(`# requests received by the service: ${received}`);
console.log(`# calls failed: ${failedCalls}`);
t.close();
server.closeAllConnections();
server.close();
