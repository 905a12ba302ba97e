// @hey-api/openapi-ts settings for scripts/test-generated-clients (input and output are
// given on its command line). The experimental validator in strict mode makes the generator
// fail on a document it finds fault with, instead of printing and going on.
export default {
  parser: { validate_EXPERIMENTAL: "strict" },
  logs: { level: "info", file: false },
};
