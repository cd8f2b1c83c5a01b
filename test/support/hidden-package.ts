/**
 * Test support: a module hook, as the first lines of a child's ESM script,
 * that makes a package unresolvable (an import of it, or of a subpath,
 * fails with ERR_MODULE_NOT_FOUND), as on a host that did not install it.
 */

/** Script text registering the hook that hides `name`. */
export function hidePackage(name: string): string {
  return `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
  const hidden = ${JSON.stringify(name)};
  export async function resolve(specifier, context, next) {
    if (specifier === hidden || specifier.startsWith(hidden + '/')) {
      const error = new Error("Cannot find package '" + specifier + "'");
      error.code = 'ERR_MODULE_NOT_FOUND';
      throw error;
    }
    return next(specifier, context);
  }\`));
`;
}
