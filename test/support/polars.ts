/**
 * Test support: nodejs-polars, the independent Arrow reader the interop tests
 * check our bytes with, loaded once; or, where its native package does not
 * load, the reason the tests that need it skip.
 */

/** The nodejs-polars module. */
export type Polars = typeof import('nodejs-polars').default;
/** A polars DataFrame. */
export type DataFrame = ReturnType<Polars['readIPCStream']>;

async function loadPolars(): Promise<{ pl: Polars | undefined; polarsSkip: string | false }> {
  try {
    const pl = (await import('nodejs-polars')).default;
    if (typeof pl.readIPCStream !== 'function') throw new Error('readIPCStream is missing');
    return { pl, polarsSkip: false };
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0];
    return { pl: undefined, polarsSkip: `nodejs-polars does not load on this platform (its native package is a pinned devDependency): ${reason}` };
  }
}

/** nodejs-polars, or undefined where it does not load. */
export const { pl, polarsSkip } = await loadPolars();
