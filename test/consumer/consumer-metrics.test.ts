/**
 * The consumer side's metrics: fetchBody with a registry counts each fetch by
 * the format the server answered in, the bytes it received, and each failure
 * by its error code; exact values after known fetches.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { fetchBody } from '../../src/consumer/fetch-body.js';
import { ipcCodecAvailable } from '../../src/ipc/compression/codec-registry.js';
import { startPlane } from '../support/data-plane-harness.js';
import { parsePrometheusText, valueOf } from '../support/prometheus-text.js';

const rows = Array.from({ length: 40 }, (_, i) => ({ id: i, name: `row ${i}` }));

test('consumer metrics: fetches and bytes by answered format, failures by code', async (t) => {
  const plane = await startPlane(t, { workers: 0 });
  const registry = new Registry();
  const urlOf = async () => `${plane.base}/s2sp/data/${await plane.mint(rows)}`;

  // The label is what came back: on loopback Arrow asks for no codec unless told to.
  const used = await urlOf();
  const fetched = [
    await fetchBody(await urlOf(), { format: 'json', registry }),
    await fetchBody(await urlOf(), { format: 'arrow', registry }),
    await fetchBody(await urlOf(), { registry, rowIds: [1, 2] }),
    await fetchBody(used, { registry }),
    ...(ipcCodecAvailable('lz4') ? [await fetchBody(await urlOf(), { format: 'arrow', codec: 'lz4', registry })] : []),
  ];
  assert.deepEqual(
    fetched.slice(0, 4).map((f) => f.format),
    ['json', 'arrow', 'arrow', 'arrow'],
  );
  assert.equal(fetched[1].compressed, false);
  if (fetched[4] !== undefined) assert.equal(fetched[4].codec, 'lz4');
  const expected = new Map<string, { fetches: number; bytes: number }>();
  for (const f of fetched) {
    const label = f.format === 'arrow' && f.compressed ? `arrow-${f.codec}` : f.format;
    const tally = expected.get(label) ?? { fetches: 0, bytes: 0 };
    expected.set(label, { fetches: tally.fetches + 1, bytes: tally.bytes + f.bytesReceived });
  }

  await assert.rejects(fetchBody(used, { registry }), { code: 'S2SP_ERR_CONSUMER_FETCH_FAILED' }); // 404: single use
  await assert.rejects(fetchBody(`http://example.test/s2sp/data/${'A'.repeat(43)}`, { registry }), { code: 'S2SP_ERR_CONSUMER_ORIGIN_REFUSED' });
  await assert.rejects(fetchBody(await urlOf(), { registry, rowIds: [] }), { code: 'S2SP_ERR_CONSUMER_ARG_INVALID' });
  // Without a registry nothing is counted.
  await fetchBody(await urlOf());

  const samples = parsePrometheusText(await registry.metrics());
  for (const [format, tally] of expected) {
    assert.equal(valueOf(samples, 's2sp_consumer_fetches_total', { format }), tally.fetches, format);
    assert.equal(valueOf(samples, 's2sp_consumer_bytes_received_total', { format }), tally.bytes, format);
  }
  assert.equal(valueOf(samples, 's2sp_consumer_fetch_failures_total', { code: 'S2SP_ERR_CONSUMER_FETCH_FAILED' }), 1);
  assert.equal(valueOf(samples, 's2sp_consumer_fetch_failures_total', { code: 'S2SP_ERR_CONSUMER_ORIGIN_REFUSED' }), 1);
  assert.equal(valueOf(samples, 's2sp_consumer_fetch_failures_total', { code: 'S2SP_ERR_CONSUMER_ARG_INVALID' }), 1);
  let fetches = 0;
  for (const [key, value] of samples) if (key.startsWith('s2sp_consumer_fetches_total')) fetches += value;
  assert.equal(fetches, fetched.length);
});
