/**
 * Regression: a hostile resource server's compressed Arrow answer made the
 * consumer decompress far past its body limit (a ~75 KB ZSTD answer took it
 * from 84 MB to 1.1 GB RSS under a 1 MB limit, and the fetch succeeded).
 * Each bomb here expands to hundreds of megabytes from an answer well under
 * the limit; the consumer must refuse it, and its peak RSS must stay far
 * below the bomb's size (measured, not inferred from sizes).
 *
 * Peak RSS (`maxRSS`) is the measure: a decompressed buffer freed before the
 * call returns still raises it. This file runs in a process of its own.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fetchBody } from '../../src/consumer/fetch-body.js';
import { fetchBodyBatches } from '../../src/consumer/fetch-body.js';
import type { IpcCodec } from '../../src/protocol/media-types.js';
import { NEEDS_LZ4, NEEDS_ZSTD, sendBytes } from '../support/arrow-streams.js';
import { codeOf } from '../support/code-of.js';
import { bombAnswer, bombOf } from '../support/compression-bombs.js';
import { startStandIn } from '../support/stand-in-server.js';

const MAX_BYTES = 4 * 1024 * 1024;
/** What each bomb expands to. LZ4 cannot beat about 250:1, so its bomb is smaller to stay under the limit on the wire. */
const BOMB_BYTES: Record<IpcCodec, number> = { zstd: 1024 * 1024 * 1024, lz4: 256 * 1024 * 1024 };
/** Peak RSS growth allowed while refusing a bomb: a small fraction of it. */
const MAX_PEAK_GROWTH = 96 * 1024 * 1024;

/** Peak resident set size of this process so far, in bytes. */
function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

for (const codec of ['zstd', 'lz4'] as const) {
  test(
    `a ${codec} bomb under a ${MAX_BYTES}-byte limit is refused, whole or batch by batch, without decompressing it`,
    codec === 'zstd' ? NEEDS_ZSTD : NEEDS_LZ4,
    async (t) => {
      const bomb = bombOf(codec, BOMB_BYTES[codec]);
      // Honest: the buffer declares its true 16 bytes, its frame expands to the bomb.
      // Lying: the header claims the rows the bomb holds, and every buffer declares it.
      const answers = { honest: bombAnswer(codec, bomb, BOMB_BYTES[codec], true), lying: bombAnswer(codec, bomb, BOMB_BYTES[codec], false) };
      for (const bytes of Object.values(answers))
        assert.ok(bytes.byteLength < MAX_BYTES, `precondition: the answer (${bytes.byteLength} bytes) is under the limit`);
      const urls = {
        honest: (await startStandIn(t, (_req, res) => sendBytes(res, answers.honest))).url,
        lying: (await startStandIn(t, (_req, res) => sendBytes(res, answers.lying))).url,
      };
      const before = peakRss();
      const expected = { honest: 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', lying: 'S2SP_ERR_CONSUMER_BODY_TOO_LARGE' };
      for (const kind of ['honest', 'lying'] as const) {
        const url = urls[kind];
        assert.equal(await codeOf(fetchBody(url, { maxBytes: MAX_BYTES, codec })), expected[kind], `fetchBody, ${kind}`);
        const streamed = async () => {
          const body = await fetchBodyBatches(url, { maxBytes: MAX_BYTES, codec });
          for await (const batch of body) assert.fail(`a batch of ${batch.numRows} rows came through`);
        };
        assert.equal(await codeOf(streamed()), expected[kind], `fetchBodyBatches, ${kind}`);
      }
      const growth = peakRss() - before;
      t.diagnostic(`peak RSS growth ${(growth / 2 ** 20).toFixed(1)} MiB for ${BOMB_BYTES[codec] / 2 ** 20} MiB bombs`);
      assert.ok(growth < MAX_PEAK_GROWTH, `peak RSS grew by ${(growth / 2 ** 20).toFixed(0)} MiB refusing ${BOMB_BYTES[codec] / 2 ** 20} MiB bombs`);
    },
  );
}
