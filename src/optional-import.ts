/**
 * Loading an optional peer dependency: the module, or undefined when the
 * host did not install it. An installed package that fails while it loads
 * is still an error.
 */

/** The module of `specifier`, or undefined when it is not installed. */
export async function optionalImport<T>(specifier: string): Promise<T | undefined> {
  try {
    return (await import(specifier)) as T;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}
