import { test } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateFormat, parseAccept, type ResponseFormat } from '../../src/data/negotiate.js';

const ALL = { arrow: true, lz4: true };
const ARROW = 'application/vnd.apache.arrow.stream';

const CASES: Array<[string | undefined, ResponseFormat | 406, { arrow: boolean; lz4: boolean }?]> = [
  [undefined, { kind: 'json' }],
  ['', { kind: 'json' }],
  ['*/*', { kind: 'json' }],
  ['application/*', { kind: 'json' }],
  ['application/json', { kind: 'json' }],
  ['application/json; charset=utf-8', { kind: 'json' }],
  [ARROW, { kind: 'arrow' }],
  [`${ARROW}; codecs="lz4"`, { kind: 'arrow', codec: 'lz4' }],
  [`${ARROW}; codecs=lz4_frame`, { kind: 'arrow', codec: 'lz4' }],
  [`${ARROW}; codecs="zstd, lz4"`, { kind: 'arrow', codec: 'lz4' }],
  [`${ARROW}; codecs="zstd"`, 406],
  [`${ARROW}; codecs="zstd", application/json;q=0.1`, { kind: 'json' }],
  [`application/json;q=0.5, ${ARROW}`, { kind: 'arrow' }],
  ['application/json;q=0, */*', { kind: 'arrow' }],
  ['application/json;q=0, */*', 406, { arrow: false, lz4: false }],
  ['*/*;q=0', 406],
  ['text/html', 406],
  ['text/csv, image/png', 406],
  [ARROW, 406, { arrow: false, lz4: false }],
  [`${ARROW}; codecs="lz4"`, 406, { arrow: true, lz4: false }],
  ['APPLICATION/JSON', { kind: 'json' }],
];

for (const [accept, expected, support] of CASES) {
  test(`Accept ${JSON.stringify(accept)} -> ${expected === 406 ? '406' : JSON.stringify(expected)}`, () => {
    if (expected === 406) {
      assert.throws(() => negotiateFormat(accept, support ?? ALL), { code: 'S2SP_ERR_ACCEPT_UNSUPPORTED' });
    } else {
      assert.deepEqual(negotiateFormat(accept, support ?? ALL), expected);
    }
  });
}

test('parseAccept keeps quoted commas inside a parameter', () => {
  const [range] = parseAccept(`${ARROW}; codecs="zstd, lz4"; q=0.7`);
  assert.equal(range.params.get('codecs'), 'zstd, lz4');
  assert.equal(range.q, 0.7);
});
