import { test } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateFormat, parseAccept, type NegotiationSupport, type ResponseFormat } from '../../src/data/negotiate.js';

type Support = { arrow: boolean; codecs: readonly string[] };
const ALL: Support = { arrow: true, codecs: ['lz4', 'zstd'] };
const ARROW = 'application/vnd.apache.arrow.stream';

const CASES: Array<[string | undefined, ResponseFormat | 406, Support?]> = [
  [undefined, { kind: 'json' }],
  ['', { kind: 'json' }],
  ['*/*', { kind: 'json' }],
  ['application/*', { kind: 'json' }],
  ['application/json', { kind: 'json' }],
  ['application/json; charset=utf-8', { kind: 'json' }],
  [ARROW, { kind: 'arrow' }],
  [`${ARROW}; codecs="lz4"`, { kind: 'arrow', codec: 'lz4' }],
  [`${ARROW}; codecs=lz4_frame`, { kind: 'arrow', codec: 'lz4' }],
  [`${ARROW}; codecs="zstd"`, { kind: 'arrow', codec: 'zstd' }],
  [`${ARROW}; codecs="zstd, lz4"`, { kind: 'arrow', codec: 'zstd' }],
  [`${ARROW}; codecs="lz4, zstd"`, { kind: 'arrow', codec: 'lz4' }],
  [`${ARROW}; codecs="zstd, lz4"`, { kind: 'arrow', codec: 'lz4' }, { arrow: true, codecs: ['lz4'] }],
  [`${ARROW}; codecs="zstd"`, 406, { arrow: true, codecs: ['lz4'] }],
  [`${ARROW}; codecs="brotli"`, 406],
  [`${ARROW}; codecs="brotli", application/json;q=0.1`, { kind: 'json' }],
  [`application/json;q=0.5, ${ARROW}`, { kind: 'arrow' }],
  ['application/json;q=0, */*', { kind: 'arrow' }],
  ['application/json;q=0, */*', 406, { arrow: false, codecs: [] }],
  ['*/*;q=0', 406],
  ['text/html', 406],
  ['text/csv, image/png', 406],
  [ARROW, 406, { arrow: false, codecs: [] }],
  [`${ARROW}; codecs="lz4"`, 406, { arrow: true, codecs: [] }],
  ['APPLICATION/JSON', { kind: 'json' }],
];

function supportOf(support: Support): NegotiationSupport {
  return { arrow: support.arrow, codec: (codec) => support.codecs.includes(codec) };
}

for (const [accept, expected, support] of CASES) {
  test(`Accept ${JSON.stringify(accept)} -> ${expected === 406 ? '406' : JSON.stringify(expected)}`, () => {
    if (expected === 406) {
      assert.throws(() => negotiateFormat(accept, supportOf(support ?? ALL)), { code: 'S2SP_ERR_ACCEPT_UNSUPPORTED' });
    } else {
      assert.deepEqual(negotiateFormat(accept, supportOf(support ?? ALL)), expected);
    }
  });
}

test('parseAccept keeps quoted commas inside a parameter', () => {
  const [range] = parseAccept(`${ARROW}; codecs="zstd, lz4"; q=0.7`);
  assert.equal(range.params.get('codecs'), 'zstd, lz4');
  assert.equal(range.q, 0.7);
});

test('only codecs a client lists are asked about (a codec may load a native addon); a 406 names the listed ones that are missing', () => {
  const asked: string[] = [];
  const support: NegotiationSupport = { arrow: true, codec: (codec) => (asked.push(codec), false) };
  assert.deepEqual(negotiateFormat(`${ARROW}, application/json;q=0.5`, support), { kind: 'arrow' });
  assert.deepEqual(asked, []);
  assert.throws(
    () => negotiateFormat(`${ARROW}; codecs="zstd"`, support),
    (error: { code: string; message: string }) => {
      assert.equal(error.code, 'S2SP_ERR_ACCEPT_UNSUPPORTED');
      assert.match(error.message, /not available on this server: zstd/);
      return true;
    },
  );
  assert.deepEqual(asked, ['zstd']);
});

test('an Accept header seen before is decided again: its parse is kept, not the answer (a codec can come and go)', () => {
  const accept = `${ARROW}; codecs="lz4", application/json;q=0.1`;
  let lz4 = true;
  const support: NegotiationSupport = { arrow: true, codec: (codec) => codec === 'lz4' && lz4 };
  assert.deepEqual(negotiateFormat(accept, support), { kind: 'arrow', codec: 'lz4' });
  lz4 = false;
  assert.deepEqual(negotiateFormat(accept, support), { kind: 'json' });
  lz4 = true;
  assert.deepEqual(negotiateFormat(accept, support), { kind: 'arrow', codec: 'lz4' });
});
