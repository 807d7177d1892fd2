// The vendored tests import `WriteEntry` from the SDK's source tree (`src/sandbox/filesystem`); here it is the installed `e2b` package's.
export * from "e2b";
