// examples/otel-prometheus.mjs run as a process: ebb/otel's metrics scraped through the
// OpenTelemetry Prometheus exporter's /metrics handler, their values agreeing with the requests
// the example's real node:http service received.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

const run = () =>
  new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [join(ROOT, 'examples/otel-prometheus.mjs')],
      { cwd: ROOT, timeout: 30_000 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });

/** The sample of `metric` whose labels include every one of `labels`. */
function sample(text: string, metric: string, labels: string[] = []): number[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${metric}{`) && labels.every((x) => l.includes(x)))
    .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
}

it('the scrape shows the calls, attempts by kind, retries, the breaker state and the amplification = requests ÷ calls', async () => {
  const text = await run();
  const received = Number(/# requests received by the service: (\d+)/.exec(text)?.[1]);
  // Every third request fails and is retried once, as far as the retry's default budget allows
  // (10 retries, then 20 % of calls): 30 calls make 40 to 44 requests; a call whose retry the
  // budget refused fails.
  expect(received).toBeGreaterThanOrEqual(40);
  expect(received).toBeLessThanOrEqual(44);
  for (const type of [
    '# TYPE ebb_calls_total counter',
    '# TYPE ebb_attempts_total counter',
    '# TYPE ebb_call_duration histogram',
    '# TYPE ebb_call_retries histogram',
    '# TYPE ebb_call_retry_delay histogram',
    '# TYPE ebb_amplification gauge',
    '# TYPE ebb_circuit_breaker_state gauge',
  ]) {
    expect(text).toContain(type);
  }
  const failed = Number(/# calls failed: (\d+)/.exec(text)?.[1]);
  expect(failed).toBeGreaterThanOrEqual(0);
  expect(sample(text, 'ebb_calls_total', ['ebb_call_outcome="success"'])).toEqual([30 - failed]);
  const attempts = sample(text, 'ebb_attempts_total', ['ebb_pipeline_name="flaky"']);
  expect(attempts.reduce((a, b) => a + b, 0)).toBe(received);
  expect(sample(text, 'ebb_attempts_total', ['ebb_attempt_kind="retry"'])).toEqual([received - 30]);
  expect(sample(text, 'ebb_call_retries_sum')).toEqual([received - 30]);
  expect(sample(text, 'ebb_amplification', ['ebb_pipeline_name="flaky"'])).toEqual([received / 30]);
  expect(sample(text, 'ebb_circuit_breaker_state', ['ebb_circuit_breaker_state="closed"'])).toEqual([1]);
});
