/**
 * Test support: reading Prometheus text (what GET /metrics answers) back into
 * numbers, so a test can assert exact counter values after known traffic.
 */
import assert from 'node:assert/strict';

/** Samples of one scrape, keyed by {@link sampleKey}. */
export type Samples = ReadonlyMap<string, number>;

/** `name{a="1",b="2"}` with the labels sorted by name; just `name` without labels. */
export function sampleKey(name: string, labels: Record<string, string> = {}): string {
  const parts = Object.keys(labels)
    .sort()
    .map((key) => `${key}=${JSON.stringify(labels[key])}`);
  return parts.length === 0 ? name : `${name}{${parts.join(',')}}`;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses Prometheus text exposition; fails on a line that is neither a comment nor a sample. */
export function parsePrometheusText(text: string): Samples {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    assert.ok(match, `not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) labels[key] = JSON.parse(`"${value}"`);
    samples.set(sampleKey(match[1], labels), Number(match[3]));
  }
  return samples;
}

/** GETs `url` (a /metrics endpoint), checks it is Prometheus text, and parses it. */
export async function scrape(url: string): Promise<Samples> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text());
}

/** The value of one sample; fails when the scrape lacks it. */
export function valueOf(samples: Samples, name: string, labels: Record<string, string> = {}): number {
  const key = sampleKey(name, labels);
  const value = samples.get(key);
  assert.ok(value !== undefined, `no sample ${key} in:\n${[...samples.keys()].join('\n')}`);
  return value;
}
