import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkDomainsExist, parseAbstractDomains } from '../../src/control/abstract-domains.js';

test('absent or empty abstract_domains means plain MCP', () => {
  assert.equal(parseAbstractDomains(undefined), undefined);
  assert.equal(parseAbstractDomains(''), undefined);
});

test('comma list parses to trimmed unique names without _row_id', () => {
  assert.deepEqual(parseAbstractDomains(' mag , place,mag,_row_id'), ['mag', 'place']);
});

test('regression: the JSON-array form names columns exactly, so a column " name" (CSV header "id, name") is nameable', () => {
  assert.deepEqual(parseAbstractDomains('["mag", " name", " time ", "mag"]'), ['mag', ' name', ' time ']);
  assert.deepEqual(parseAbstractDomains(' mag , place'), ['mag', 'place'], 'the comma form still trims');
});

for (const value of [' , ', '[]', '_row_id', '["_row_id"]', '[bad json', '{"a":1}', '[1,2]', '  ']) {
  test(`abstract_domains ${JSON.stringify(value)} is S2SP_ERR_DOMAINS_INVALID`, () => {
    assert.throws(() => parseAbstractDomains(value), { code: 'S2SP_ERR_DOMAINS_INVALID' });
  });
}

test('unknown domains name themselves and list the available columns', () => {
  assert.throws(
    () => checkDomainsExist(['mag', 'nope'], ['mag', 'place']),
    (error: Error & { code: string }) => error.code === 'S2SP_ERR_DOMAINS_UNKNOWN' && /nope/.test(error.message) && /place/.test(error.message),
  );
  assert.doesNotThrow(() => checkDomainsExist(['mag'], ['mag', 'place']));
});
