import type { TestContext } from 'node:test';
import { createEncoderPool, type EncoderPool } from '../../src/worker/encoder-pool.js';

/**
 * A real encoder pool (closed after the test) that records each task it is
 * handed: the background ones (think-time preparation) as promises a test
 * can wait on, the others as a count.
 */
export function countingPool(t: TestContext, threads = 2) {
  const real = createEncoderPool({ threads });
  t.after(() => real.close());
  const background: Array<Promise<unknown>> = [];
  let foreground = 0;
  const pool: EncoderPool = {
    threads: real.threads,
    run(task, options) {
      const running = real.run(task, options);
      if (options?.background === true) background.push(running.catch(() => {}));
      else foreground++;
      return running;
    },
    close: () => real.close(),
  };
  return { pool, background, foreground: () => foreground };
}
