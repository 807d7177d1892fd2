// The vendored tests import the SDK from its source tree (`../../../src/index.js`); here that is the installed `e2b` package.
export * from "e2b";
