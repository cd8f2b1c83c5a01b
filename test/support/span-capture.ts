/**
 * Spans in memory for tests: a tracer provider registered globally (as a
 * host's SDK setup would) whose in-memory exporter also tells waiters when
 * a span ends, so a test waits for the spans it expects, never a fixed time.
 */
import type { TestContext } from 'node:test';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';

type ExportResult = Parameters<Parameters<InMemorySpanExporter['export']>[1]>[0];

/** An InMemorySpanExporter that wakes waiters on every export. */
class WatchedExporter extends InMemorySpanExporter {
  readonly #waiters = new Set<() => void>();

  override export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    super.export(spans, resultCallback);
    for (const wake of this.#waiters) wake();
  }

  /** Resolves once `ready` holds of the finished spans; fails after `timeoutMs` (a test bound, not a pace). */
  async until(ready: (spans: ReadableSpan[]) => boolean, timeoutMs = 10_000): Promise<ReadableSpan[]> {
    if (ready(this.getFinishedSpans())) return this.getFinishedSpans();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(
          new Error(
            `spans never got ready; finished: ${this.getFinishedSpans()
              .map((s) => s.name)
              .join(', ')}`,
          ),
        );
      }, timeoutMs);
      const check = () => {
        if (!ready(this.getFinishedSpans())) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(this.getFinishedSpans());
      };
      this.#waiters.add(check);
    });
  }
}

/** Registers a global tracer provider exporting to memory for the test's duration. */
export function captureSpans(t: TestContext): WatchedExporter {
  const exporter = new WatchedExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  if (!trace.setGlobalTracerProvider(provider)) throw new Error('a global tracer provider is registered already');
  t.after(async () => {
    trace.disable();
    await provider.shutdown();
  });
  return exporter;
}

/** The span named `name` (exactly one). */
export function spanNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1) throw new Error(`${found.length} spans named ${name}: ${spans.map((s) => s.name).join(', ')}`);
  return found[0]!;
}
