/**
 * Test support: the stable error code a call throws or a promise rejects
 * with (undefined when it succeeds). Tests assert codes, never message text.
 */

/** The code a promise rejects with, or undefined when it resolves. */
export async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

/** The code a synchronous call throws, or undefined when it returns. */
export function codeThrownBy(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}
