import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mintToken } from '../../src/protocol/token.js';
import { DEFAULT_ALLOWED_ORIGINS, checkResourceUrl } from '../../src/consumer/resource-url.js';
import { codeThrownBy } from '../support/code-of.js';

const token = mintToken();
const path = `/s2sp/data/${token}`;

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail('expected a throw');
}

test('DEFAULT_ALLOWED_ORIGINS is empty', () => {
  assert.deepEqual([...DEFAULT_ALLOWED_ORIGINS], []);
});

test('loopback origins are always allowed', () => {
  for (const origin of [
    'http://127.0.0.1:9001',
    'http://localhost:1',
    'http://LOCALHOST',
    'http://127.200.3.4',
    'http://[::1]:8080',
    'https://127.0.0.1',
    'http://2130706433',
  ]) {
    const url = checkResourceUrl(`${origin}${path}`);
    assert.ok(url instanceof URL, origin);
    assert.ok(url.pathname.endsWith(token), origin);
  }
});

test('a path prefix before /s2sp (a proxy) is allowed', () => {
  const url = checkResourceUrl(`http://127.0.0.1:9001/proxy/weather${path}`);
  assert.equal(url.pathname, `/proxy/weather${path}`);
});

test('an allowed origin is compared after normalisation', () => {
  const allowed = ['https://Data.Example.com:443/'];
  assert.equal(checkResourceUrl(`https://data.example.com${path}`, allowed).hostname, 'data.example.com');
  assert.equal(checkResourceUrl(`https://DATA.example.com:443${path}`, allowed).hostname, 'data.example.com');
});

test('origins other than loopback and the allowed ones are refused', () => {
  const allowed = ['https://data.example.com'];
  for (const url of [
    `http://data.example.com${path}`, // scheme differs
    `https://data.example.com:8443${path}`, // port differs
    `https://evil.example.com${path}`,
    `http://localhost.evil.com${path}`,
    `http://127.0.0.1.nip.io${path}`,
    `http://127.0.0.1@evil.com${path}`,
    `http://10.0.0.1${path}`,
    `http://[::2]${path}`,
  ]) {
    assert.equal(
      codeThrownBy(() => checkResourceUrl(url, allowed)),
      'S2SP_ERR_CONSUMER_ORIGIN_REFUSED',
      url,
    );
  }
});

test('the origin refusal tells the LLM what to do and lists the allowed origins, without the token', () => {
  const message = messageOf(() => checkResourceUrl(`https://evil.example.com${path}`, ['https://data.example.com']));
  assert.match(message, /resource_url must be the URL returned by the resource tool/);
  assert.match(message, /https:\/\/data\.example\.com/);
  assert.match(message, /loopback/);
  assert.ok(!message.includes(token));
});

test('schemes other than http and https are invalid', () => {
  for (const url of [`file://${path}`, `data:text/plain,${path}`, `ftp://127.0.0.1${path}`, `ddi://${token}`, `javascript:alert(1)`]) {
    assert.equal(
      codeThrownBy(() => checkResourceUrl(url)),
      'S2SP_ERR_CONSUMER_URL_INVALID',
      url,
    );
  }
});

test('a URL that is not a data-plane URL is invalid', () => {
  for (const url of [
    'not a url',
    '',
    'http://127.0.0.1:9001/',
    'http://127.0.0.1:9001/s2sp/data/',
    'http://127.0.0.1:9001/s2sp/data/short',
    `http://127.0.0.1:9001/s2sp/data/${token}/extra`,
    `http://127.0.0.1:9001/other/${token}`,
    `http://127.0.0.1:9001/s2sp/data/${token.slice(0, 42)}!`,
  ]) {
    assert.equal(
      codeThrownBy(() => checkResourceUrl(url)),
      'S2SP_ERR_CONSUMER_URL_INVALID',
      url,
    );
  }
});

test('a malformed token is not echoed in full', () => {
  const bad = `${token}x`;
  const message = messageOf(() => checkResourceUrl(`http://127.0.0.1/s2sp/data/${bad}`));
  assert.ok(!message.includes(bad));
  assert.ok(!message.includes(token));
  assert.match(message, /resource_url must be the URL returned by the resource tool/);
});

test('an unparseable URL holding a token is not echoed', () => {
  const message = messageOf(() => checkResourceUrl(`http://[bad${path}`));
  assert.ok(!message.includes(token));
});

test('a malformed allowed origin is a configuration error', () => {
  assert.equal(
    codeThrownBy(() => checkResourceUrl(`http://127.0.0.1${path}`, ['not an origin'])),
    'S2SP_ERR_CONSUMER_ARG_INVALID',
  );
  assert.equal(
    codeThrownBy(() => checkResourceUrl(`http://127.0.0.1${path}`, ['ftp://x.example'])),
    'S2SP_ERR_CONSUMER_ARG_INVALID',
  );
});
