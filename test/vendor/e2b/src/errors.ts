// The vendored tests import the SDK's errors from its source tree (`src/errors.js`); here they are the installed `e2b` package's.
export * from "e2b";
