/**
 * src/telemetry/tracing.ts: W3C traceparent reading, and the promise that
 * without `@opentelemetry/api` nothing changes and nothing is paid: no span
 * handles, no route hooks, no wrapped tool callbacks, and a received
 * traceparent still goes on to the data plane unchanged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { parseTraceparent } from '../../src/telemetry/tracing.js';
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
