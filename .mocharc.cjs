// Test files given to `npm test -- <files>` (passed on by scripts/test.ts as TEST_FILES) replace the
// default set; mocha would otherwise add them to it and run the whole suite. `npm run image:test`
// names its files the same way; e2e/image/ is in no default set (it needs a built image).
const files = process.env.TEST_FILES ? process.env.TEST_FILES.split('\n').filter(Boolean) : undefined;

module.exports = {
  // Services started in the test process run as in their own (dev-stack/src/node-options.ts): AsyncLocalStorage on
  // AsyncContextFrame, Node.js 24's default (docs/adr/0064-async-context-frame.md).
  'node-option': ['import=tsx', ...(Number(process.versions.node.split('.')[0]) < 24 ? ['experimental-async-context-frame'] : [])],
  extension: ['ts'],
  spec: files ?? [
    'shared/test/**/*.test.ts',
    // The root package's scripts (the Kubernetes check, the dependency audit's policy).
    'scripts/test/**/*.test.ts',
    'dev-stack/test/**/*.test.ts',
    'clients/test/**/*.test.ts',
    'console/test/**/*.test.ts',
    'management-service/test/**/*.test.ts',
    'data-service/test/**/*.test.ts',
    'e2e/test/**/*.test.ts',
    // Pure rules of the benchmarks' checks (the benchmarks themselves run by npm run bench:<name>).
    'bench/test/**/*.test.ts',
  ],
  timeout: 30000,
  reporter: 'spec',
};
