/**
 * src/telemetry/tracing.ts: W3C traceparent reading, and the promise that
 * without `@opentelemetry/api` nothing changes and nothing is paid: no span
 * handles, no route hooks, no wrapped tool callbacks, and a received
 * traceparent still goes on to the data plane unchanged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { parseTraceparent, startSpan } from '../../src/telemetry/tracing.js';
import { runNode } from '../support/cli-process.js';
import { hidePackage } from '../support/hidden-package.js';

const DIST_SRC = fileURLToPath(new URL('../../src/', import.meta.url));

test('parseTraceparent reads version 00 and later versions, and refuses invalid ids, ff and malformed values', () => {
  assert.deepEqual(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'), {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: 1,
  });
  assert.equal(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-future')?.traceFlags, 0);
  for (const bad of [
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
    'nonsense',
  ]) {
    assert.equal(parseTraceparent(bad), undefined, bad);
  }
});

/** A module hook that makes `@opentelemetry/api` unresolvable, as on a host that did not install it. */
const HIDE_OTEL_API = hidePackage('@opentelemetry/api');

test('without @opentelemetry/api: no spans, no route hooks, tool callbacks registered as they are, traceparent passed on', async () => {
  const probe = `
    const src = ${JSON.stringify(DIST_SRC)};
    const tracing = await import(src + 'telemetry/tracing.js');
    const { withFetchSpans } = await import(src + 'data/fetch-spans.js');
    const { tracedTool } = await import(src + 'control/tool-span.js');
    const { FetchSpans } = await import(src + 'consumer/fetch-spans.js');
    let api = 'hidden';
    try { await import('@opentelemetry/api'); api = 'loaded'; } catch {}
    const options = { bodyLimit: 1 };
    const callback = async () => ({ content: [] });
    const parent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    console.log(JSON.stringify({
      api,
      available: tracing.tracingAvailable,
      span: tracing.startSpan('x', 'internal', parent) === undefined,
      routeOptionsUnchanged: withFetchSpans(options) === options,
      callbackUnchanged: tracedTool('t', callback) === callback,
      forwarded: new FetchSpans(parent).traceparent === parent,
      malformedDropped: new FetchSpans('nonsense').traceparent === undefined,
    }));
  `;
  const { code, stdout, stderr } = await runNode('--input-type=module', ['-e', `${HIDE_OTEL_API}\n${probe}`], { timeoutMs: 30_000 });
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout), {
    api: 'hidden',
    available: false,
    span: true,
    routeOptionsUnchanged: true,
    callbackUnchanged: true,
    forwarded: true,
    malformedDropped: true,
  });
});

test('startSpan follows the registered tracer provider: none, one registered after load, then another after disable()', async (t) => {
  assert.equal(startSpan('before', 'internal', undefined), undefined, 'no provider: no span handle');
  const providers: TracerProvider[] = [];
  t.after(async () => {
    trace.disable();
    for (const provider of providers) await provider.shutdown();
  });
  for (const round of ['first', 'second']) {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    providers.push(provider);
    assert.ok(trace.setGlobalTracerProvider(provider), `${round} provider registered`);
    const span = startSpan(`${round}-span`, 'internal', undefined, { 's2sp.rows': 1 });
    assert.ok(span !== undefined, `${round}: a span while a provider is registered`);
    span.end();
    assert.deepEqual(
      exporter.getFinishedSpans().map((s) => [s.name, s.attributes['s2sp.rows']]),
      [[`${round}-span`, 1]],
      `${round}: recorded by the provider registered now`,
    );
    trace.disable();
    assert.equal(startSpan(`${round}-after`, 'internal', undefined), undefined, `${round}: disabled, no span handle`);
  }
});
