/** A `require` that fails as Node's does, for the loaders that turn a missing optional package into an install hint. */

/** A require that throws an error with Node's `code` and `message`. */
export function failingRequire(code: string, message: string): (id: string) => never {
  return () => {
    throw Object.assign(new Error(message), { code });
  };
}

/** A require for a project where the package `name` is not installed. */
export const missingModule = (name: string): ((id: string) => never) =>
  failingRequire("MODULE_NOT_FOUND", `Cannot find module '${name}'\nRequire stack:\n- x.js`);
